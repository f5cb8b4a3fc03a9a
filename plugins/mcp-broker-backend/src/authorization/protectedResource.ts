/*
 * The broker's MCP endpoint as an OAuth 2.0 protected resource (RFC 9728, MCP authorization):
 * its resource identifier, the well-known URLs where clients look for its metadata, and that
 * metadata. Backstage's auth backend is the one authorization server; the broker issues no
 * tokens. Pure functions: no HTTP here.
 */

/** RFC 9728's well-known suffix for protected resource metadata. */
export const PROTECTED_RESOURCE_SUFFIX = 'oauth-protected-resource';
/** RFC 8414's well-known suffix for authorization server metadata. */
export const AUTHORIZATION_SERVER_SUFFIX = 'oauth-authorization-server';
/** OpenID Connect Discovery's well-known suffix. */
export const OPENID_CONFIGURATION_SUFFIX = 'openid-configuration';

/** The broker's endpoint as a protected resource. */
export interface ProtectedResource {
  /** The endpoint's canonical URL (from `backend.baseUrl`): the resource identifier. */
  readonly resource: string;
  /** The issuer of Backstage's auth backend (`<backend.baseUrl>/api/auth`). */
  readonly authorizationServer: string;
}

/**
 * `<origin>/.well-known/<suffix><path>`: the well-known URL derived from a URL with a path by
 * inserting the well-known segment between the origin and the path (RFC 8414 §3.1, RFC 9728
 * §3.1), a trailing slash of the path dropped. This is the first URL every stock MCP client
 * tries for a resource, and for an authorization server whose issuer has a path.
 */
export function pathInsertedWellKnownUrl(url: string, suffix: string): URL {
  const parsed = new URL(url);
  const path = parsed.pathname === '/' ? '' : parsed.pathname.replace(/\/$/, '');
  return new URL(`/.well-known/${suffix}${path}`, parsed.origin);
}

/**
 * The Protected Resource Metadata document (RFC 9728 §2). `scopesSupported` are the scopes a
 * client should ask the authorization server for (Backstage's own: `openid`, and
 * `offline_access` when it issues refresh tokens); omitted when unknown.
 */
export function protectedResourceMetadata(
  protectedResource: ProtectedResource,
  scopesSupported?: readonly string[],
): Record<string, unknown> {
  return {
    resource: protectedResource.resource,
    authorization_servers: [protectedResource.authorizationServer],
    bearer_methods_supported: ['header'],
    ...(scopesSupported === undefined ? {} : { scopes_supported: [...scopesSupported] }),
    resource_name: 'Backstage MCP broker',
  };
}

/** What a `WWW-Authenticate: Bearer` challenge says (RFC 6750 §3, RFC 9728 §5.1). */
export interface BearerChallenge {
  /** Where the resource's metadata is (RFC 9728 `resource_metadata`). */
  resourceMetadataUrl: string;
  /** `invalid_token` when the request carried a bearer token that was refused. */
  error?: 'invalid_token';
  /** Readable reason; printable ASCII without `"` or `\` (RFC 6750 §3). */
  errorDescription?: string;
}

/** Keeps what a quoted-string may hold unescaped: printable ASCII but `"` and `\`. */
function quotable(value: string): string {
  return [...value].filter(c => c >= ' ' && c <= '~' && c !== '"' && c !== '\\').join('');
}

/** The value of a `WWW-Authenticate` header for a 401 (RFC 6750 §3 syntax). */
export function bearerChallenge(challenge: BearerChallenge): string {
  const params: string[] = [];
  if (challenge.error !== undefined) params.push(`error="${challenge.error}"`);
  if (challenge.errorDescription !== undefined) {
    params.push(`error_description="${quotable(challenge.errorDescription)}"`);
  }
  params.push(`resource_metadata="${quotable(challenge.resourceMetadataUrl)}"`);
  return `Bearer ${params.join(', ')}`;
}
