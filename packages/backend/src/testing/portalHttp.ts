/*
 * Small helpers for end-to-end tests of the portal REST API on the real backend process:
 * raw HTTP calls (to assert status codes and error bodies) and typed clients per user.
 */
import { PortalClient } from '@devportal/plugin-portal-common';
import type { BackendProcess } from './startBackendProcess';

/** The static token of app-config.yaml: a service principal. */
export const STATIC_SERVICE_TOKEN = 'dev-only-static-token-0123456789';

/** A raw answer: status and parsed JSON body (undefined when empty). */
export interface PortalResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** Options of {@link portalCall}. */
export interface PortalCallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is instead of JSON-encoding `body`. */
  rawBody?: string;
  contentType?: string;
}

/** Calls `{backend}/api/portal{path}` and returns status and JSON body. */
export async function portalCall(
  backend: BackendProcess,
  method: string,
  path: string,
  options: PortalCallOptions = {},
): Promise<PortalResponse> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  const hasBody = options.body !== undefined || options.rawBody !== undefined;
  if (hasBody) headers['Content-Type'] = options.contentType ?? 'application/json';
  const response = await fetch(`${backend.baseUrl}/api/portal${path}`, {
    method,
    headers,
    body:
      options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? undefined : JSON.parse(text),
    headers: response.headers,
  };
}

/** A typed portal client acting with `token`. */
export function portalClient(backend: BackendProcess, token: string): PortalClient {
  return new PortalClient({
    baseUrl: `${backend.baseUrl}/api/portal`,
    getToken: async () => token,
  });
}

/** The fixture's HTTPRoute (examples/toystore.yaml), which test products target. */
export const TOYSTORE_ROUTE = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
} as const;

/** Options of {@link createPublishedProduct}. */
export interface PublishedProductOptions {
  /** `automatic` makes every key request Approved at once. Default `manual`. */
  approvalMode?: 'manual' | 'automatic';
  /** The product's owner (`backstage.io/owner`); default: the portal's (the creator). */
  owner?: string;
}

/**
 * Creates a Published product `name` in namespace `toystore` on the fixture route (throws
 * unless the portal answers 201).
 */
export async function createPublishedProduct(
  backend: BackendProcess,
  token: string,
  name: string,
  { approvalMode = 'manual', owner }: PublishedProductOptions = {},
): Promise<void> {
  const created = await portalCall(backend, 'POST', '/apiproducts', {
    token,
    body: {
      metadata: {
        namespace: 'toystore',
        name,
        ...(owner !== undefined && { annotations: { 'backstage.io/owner': owner } }),
      },
      spec: {
        displayName: name,
        targetRef: TOYSTORE_ROUTE,
        publishStatus: 'Published',
        approvalMode,
      },
    },
  });
  if (created.status !== 201) {
    throw new Error(
      `creating product ${name} answered ${created.status}: ${JSON.stringify(created.body)}`,
    );
  }
}

let counter = 0;
/** A fresh DNS-1123 name for test records. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${Date.now().toString(36)}-${counter}`;
}
