/*
 * An MCPServerRegistration (mcp.kuadrant.io/v1alpha1, the kind Kuadrant's mcp-gateway uses) as a
 * broker server entry. Field names follow Kuadrant's CRD: spec.targetRef (an HTTPRoute),
 * spec.path (default /mcp), spec.toolPrefix, spec.credentialRef {name, key (default "token")}.
 * The broker adds two things Kuadrant's CRD does not have: spec.auth, the identity mode of spec
 * §11 (a cluster with Kuadrant's own CRD prunes it: such servers stay in broker mode), and
 * the annotation `devportal.kuadrant.io/mcp-server-url`, which names the URL directly
 * (annotations survive pruning).
 */
import { isValidServerName, isValidToolPrefix, type BrokerServerConfig } from '../config';
import { parseServerAuth, ServerAuthError, type ServerAuth } from '../identity/serverAuth';

/** Annotation with an explicit server URL (instead of resolving the HTTPRoute). */
export const SERVER_URL_ANNOTATION = 'devportal.kuadrant.io/mcp-server-url';

/** The parts of a Kubernetes object the mapping reads. */
export interface KubeObjectLike {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
    resourceVersion?: string;
  };
  spec?: any;
  data?: Record<string, string>;
}

/** Why a registration could not become a server (shown in logs; never contains secrets). */
export class RegistrationError extends Error {}

/** The broker's name of a registration: `<namespace>-<name>`, `[a-z0-9-]`. */
export function serverNameOf(namespace: string, name: string): string {
  return `${namespace}-${name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
}

/** What resolving a registration needs to read from the cluster. */
export interface RegistrationLookups {
  httpRoute(namespace: string, name: string): Promise<KubeObjectLike | undefined>;
  secret(namespace: string, name: string): Promise<KubeObjectLike | undefined>;
}

/** Builds the server entry of a registration, reading its HTTPRoute and Secret. */
export async function resolveRegistration(
  registration: KubeObjectLike,
  lookups: RegistrationLookups,
  routes: { scheme: 'http' | 'https'; port?: number },
): Promise<BrokerServerConfig> {
  const namespace = registration.metadata?.namespace ?? '';
  const resourceName = registration.metadata?.name ?? '';
  const spec = registration.spec ?? {};
  const name = serverNameOf(namespace, resourceName);
  if (!isValidServerName(name))
    throw new RegistrationError(`cannot derive a server name from ${namespace}/${resourceName}`);

  const toolPrefix = typeof spec.toolPrefix === 'string' ? spec.toolPrefix : `${name}_`;
  if (!isValidToolPrefix(toolPrefix)) {
    throw new RegistrationError(
      `spec.toolPrefix "${toolPrefix}" must use letters, digits, "_", "." or "-"`,
    );
  }
  const url = await urlOf(registration, namespace, spec, lookups, routes);
  const headers: Record<string, string> = {};
  if (spec.credentialRef !== undefined) {
    headers.Authorization = await credentialOf(namespace, spec.credentialRef, lookups);
  }
  const auth = await authOf(namespace, spec.auth, lookups);
  return {
    name,
    url,
    toolPrefix,
    headers,
    source: {
      type: 'kubernetes',
      namespace,
      name: resourceName,
      ...(registration.metadata?.uid === undefined ? {} : { uid: registration.metadata.uid }),
    },
    ...(auth.mode === 'broker' ? {} : { auth }),
  };
}

/**
 * `spec.auth` as a server's identity settings; a token exchange's `clientSecretRef` is read from
 * its Secret (in the registration's namespace) into `clientSecret` first. Errors name the field
 * or the Secret, never a value.
 */
async function authOf(
  namespace: string,
  raw: unknown,
  lookups: RegistrationLookups,
): Promise<ServerAuth> {
  let section = raw;
  if (
    typeof raw === 'object' &&
    raw !== null &&
    (raw as { mode?: unknown }).mode === 'tokenExchange'
  ) {
    const { clientSecretRef, clientSecret, ...rest } = raw as Record<string, any>;
    if (clientSecret !== undefined) {
      throw new RegistrationError(
        'spec.auth.clientSecret is not allowed: reference a Secret with spec.auth.clientSecretRef',
      );
    }
    if (typeof clientSecretRef?.name !== 'string' || clientSecretRef.name === '') {
      throw new RegistrationError('spec.auth.clientSecretRef.name is required for tokenExchange');
    }
    const key =
      typeof clientSecretRef.key === 'string' && clientSecretRef.key !== ''
        ? clientSecretRef.key
        : 'clientSecret';
    section = {
      ...rest,
      clientSecret: await secretValue(namespace, clientSecretRef.name, key, lookups),
    };
  }
  try {
    return parseServerAuth(section, 'spec.auth');
  } catch (error) {
    if (error instanceof ServerAuthError) throw new RegistrationError(error.message);
    throw error;
  }
}

/** One key of a Secret as text; errors name the Secret and key, never the value. */
async function secretValue(
  namespace: string,
  name: string,
  key: string,
  lookups: RegistrationLookups,
): Promise<string> {
  const secret = await lookups.secret(namespace, name);
  if (!secret) throw new RegistrationError(`Secret ${namespace}/${name} not found`);
  const encoded = secret.data?.[key];
  if (encoded === undefined)
    throw new RegistrationError(`Secret ${namespace}/${name} has no key "${key}"`);
  const value = Buffer.from(encoded, 'base64').toString('utf8').trim();
  if (value === '' || /[\r\n]/.test(value)) {
    throw new RegistrationError(`Secret ${namespace}/${name} key "${key}" is empty or spans lines`);
  }
  return value;
}

async function urlOf(
  registration: KubeObjectLike,
  namespace: string,
  spec: any,
  lookups: RegistrationLookups,
  routes: { scheme: 'http' | 'https'; port?: number },
): Promise<string> {
  const explicit = registration.metadata?.annotations?.[SERVER_URL_ANNOTATION];
  if (explicit !== undefined) return checkedUrl(explicit, `annotation ${SERVER_URL_ANNOTATION}`);
  const ref = spec.targetRef;
  if (typeof ref?.name !== 'string' || ref.name === '') {
    throw new RegistrationError('spec.targetRef.name is required (an HTTPRoute)');
  }
  if (
    (ref.kind ?? 'HTTPRoute') !== 'HTTPRoute' ||
    (ref.group ?? 'gateway.networking.k8s.io') !== 'gateway.networking.k8s.io'
  ) {
    throw new RegistrationError('spec.targetRef must be a gateway.networking.k8s.io HTTPRoute');
  }
  const routeNamespace =
    typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace;
  const route = await lookups.httpRoute(routeNamespace, ref.name);
  if (!route) throw new RegistrationError(`HTTPRoute ${routeNamespace}/${ref.name} not found`);
  const hostname = route.spec?.hostnames?.[0];
  if (typeof hostname !== 'string' || hostname === '' || hostname.includes('*')) {
    throw new RegistrationError(
      `HTTPRoute ${routeNamespace}/${ref.name} has no usable (non-wildcard) hostname`,
    );
  }
  const path = typeof spec.path === 'string' && spec.path !== '' ? spec.path : '/mcp';
  const port = routes.port !== undefined ? `:${routes.port}` : '';
  return checkedUrl(
    `${routes.scheme}://${hostname}${port}${path.startsWith('/') ? path : `/${path}`}`,
    'the HTTPRoute',
  );
}

function checkedUrl(raw: string, from: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RegistrationError(`${from} gives "${raw}", which is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RegistrationError(`${from} gives a URL that is not http or https`);
  }
  return url.toString();
}

/**
 * The Authorization header value from the referenced Secret: sent as is when it already has a
 * scheme ("Bearer …", "Basic …"), else as a bearer token. Error messages name the Secret and
 * key, never the value.
 */
async function credentialOf(
  namespace: string,
  ref: any,
  lookups: RegistrationLookups,
): Promise<string> {
  if (typeof ref?.name !== 'string' || ref.name === '') {
    throw new RegistrationError('spec.credentialRef.name is required when credentialRef is set');
  }
  const key = typeof ref.key === 'string' && ref.key !== '' ? ref.key : 'token';
  const value = await secretValue(namespace, ref.name, key, lookups);
  return /^[A-Za-z][A-Za-z0-9_-]* \S/.test(value) ? value : `Bearer ${value}`;
}
