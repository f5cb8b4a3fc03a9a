/*
 * What a backend may ask a person to open (spec §11.1): a server's URL-mode elicitation
 * (`elicitation/create` with `mode: "url"`, on a 2025-11-25 session or among a 2026-07-28
 * `input_required` result's input requests) reaches the client only
 *   - for an `https` URL — or an `http` one on a loopback host while the broker itself runs on a
 *     loopback address (development: `backend.baseUrl` is `http://localhost:7007`);
 *   - never for a URL on the broker's own origin under the broker's path: the broker's own
 *     credential page (`/api/mcp-broker/connect/…`, `/api/mcp-broker/credentials…`) is the
 *     broker's to link to, and a server that sends a person there could have them store a
 *     credential meant for another server, or think the broker asks;
 *   - named with its server: the message the person reads starts with `MCP server "<name>" asks
 *     you to open a link: ` so a look-alike "store your credential" link says who sent it.
 * A refused request is answered toward the backend with a JSON-RPC error (-32602) whose message
 * says why; the person sees nothing of it. Every other server-to-client request passes as it is.
 */
import { JsonRpcErrorCode, isPlainObject } from '../protocol/jsonRpc';

/** Where the broker lives, for {@link screenServerRequest}. */
export interface UrlElicitationPolicy {
  /** The broker's external origin (`https://portal.example.com`). */
  readonly brokerOrigin: string;
  /** The broker plugin's path on it (`/api/mcp-broker`). */
  readonly brokerPath: string;
  /** `http` URLs on loopback hosts pass (the broker itself runs on loopback: development). */
  readonly allowLoopbackHttp: boolean;
  /** The app's "My connections" page, when the broker sends people there (credentialPageLocation.ts). */
  readonly appPage?: { readonly origin: string; readonly path: string };
}

/** A server request as it may go to the client, or why it may not. */
export type ScreenedServerRequest =
  | { readonly params: Record<string, unknown> | undefined }
  | { readonly refusal: { code: number; message: string } };

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127(?:\.\d{1,3}){3}$/.test(hostname);
}

/**
 * The policy of a broker whose external base URL is `brokerBaseUrl` (`…/api/mcp-broker`) and
 * whose credential page is `appPage` in the app, if it is there.
 */
export function urlElicitationPolicy(
  brokerBaseUrl: string,
  appPage?: { origin: string; path: string },
): UrlElicitationPolicy {
  const url = new URL(brokerBaseUrl);
  return {
    brokerOrigin: url.origin,
    // Express matches routes without case: so does the check.
    brokerPath: url.pathname.replace(/\/+$/, '').toLowerCase(),
    allowLoopbackHttp: url.protocol === 'http:' && isLoopbackHost(url.hostname),
    ...(appPage === undefined ? {} : { appPage }),
  };
}

function isUnder(url: URL, origin: string, path: string): boolean {
  const lower = url.pathname.toLowerCase();
  return url.origin === origin && (lower === path || lower.startsWith(`${path}/`));
}

/** The prefix that names the asking server in a relayed URL elicitation's message. */
export function askingServerPrefix(server: string): string {
  return `MCP server "${server}" asks you to open a link: `;
}

/**
 * `server`'s request `method` (`params`) as it may reach the client; see the file comment.
 * Without a policy nothing is screened (the broker's own unit tests of other matters).
 */
export function screenServerRequest(
  server: string,
  method: string,
  params: Record<string, unknown> | undefined,
  policy: UrlElicitationPolicy | undefined,
): ScreenedServerRequest {
  if (
    policy === undefined ||
    method !== 'elicitation/create' ||
    !isPlainObject(params) ||
    params.mode !== 'url'
  ) {
    return { params };
  }
  const refuse = (why: string): ScreenedServerRequest => ({
    refusal: {
      code: JsonRpcErrorCode.InvalidParams,
      message: `The MCP broker does not relay this URL elicitation to the person: ${why}`,
    },
  });
  let url: URL;
  try {
    url = new URL(String(params.url));
  } catch {
    return refuse('its url is not an absolute URL');
  }
  const loopbackHttp =
    url.protocol === 'http:' && policy.allowLoopbackHttp && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp) {
    return refuse(
      policy.allowLoopbackHttp
        ? 'only https URLs (or http on a loopback host, in development) are relayed'
        : 'only https URLs are relayed',
    );
  }
  if (
    isUnder(url, policy.brokerOrigin, policy.brokerPath) ||
    (policy.appPage !== undefined && isUnder(url, policy.appPage.origin, policy.appPage.path))
  ) {
    return refuse(
      "it points at the broker's own pages (a server never sends a person to the broker's credential page)",
    );
  }
  const message = typeof params.message === 'string' ? params.message : '';
  return { params: { ...params, message: `${askingServerPrefix(server)}${message}` } };
}

/**
 * A 2026-07-28 backend's `inputRequests` (of an `input_required` round, or of a task's
 * `DetailedTask`) as they may reach the client: each URL elicitation screened
 * ({@link screenServerRequest}), or the first refusal.
 */
export function screenInputRequests(
  server: string,
  inputRequests: Record<string, unknown> | undefined,
  policy: UrlElicitationPolicy | undefined,
):
  | { readonly inputRequests: Record<string, unknown> | undefined }
  | { readonly refusal: { code: number; message: string } } {
  if (inputRequests === undefined) return { inputRequests };
  const screened: Record<string, unknown> = {};
  for (const [key, input] of Object.entries(inputRequests)) {
    if (!isPlainObject(input)) {
      screened[key] = input;
      continue;
    }
    const params = isPlainObject(input.params) ? input.params : undefined;
    const outcome = screenServerRequest(server, String(input.method), params, policy);
    if ('refusal' in outcome) return outcome;
    screened[key] = outcome.params === params ? input : { ...input, params: outcome.params };
  }
  return { inputRequests: screened };
}
