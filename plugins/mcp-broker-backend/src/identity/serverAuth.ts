/*
 * `auth` of a backend MCP server (spec §11): which credential the broker presents on a person's
 * behalf for that server's `tools/call`, `prompts/get`, `resources/read` and `completion/complete`.
 * The event connection and the shared lists always use the server's static `headers` (the
 * broker's own credentials), whatever the mode.
 *
 * One parser for both sources — app-config (`mcpBroker.servers[].auth`) and an
 * MCPServerRegistration (`spec.auth`, whose `clientSecretRef` the registration mapping resolves
 * into `clientSecret` first) — so a mode means the same wherever it is declared. Every mistake
 * names the key and what to write; no message ever contains a secret.
 */
import { z } from 'zod';

/** How the broker identifies a person to a backend. */
export type CredentialMode = 'broker' | 'backstage' | 'tokenExchange' | 'userCredential';

/** Every mode, in the order the documentation lists them. */
export const CREDENTIAL_MODES: readonly CredentialMode[] = [
  'broker',
  'backstage',
  'tokenExchange',
  'userCredential',
];

/** `broker` (the default): the server's static headers for everyone. */
export interface BrokerAuth {
  readonly mode: 'broker';
}

/** `backstage`: a Backstage plugin token on behalf of the caller for `targetPluginId`. */
export interface BackstageAuth {
  readonly mode: 'backstage';
  /** The Backstage plugin that serves this MCP server, e.g. `mcp-actions`. */
  readonly targetPluginId: string;
}

/** How the broker authenticates itself at the token endpoint (RFC 6749 §2.3.1). */
export type ClientAuthenticationMethod = 'client_secret_basic' | 'client_secret_post';

/** `tokenExchange`: an RFC 8693 token for the caller, obtained at `tokenEndpoint`. */
export interface TokenExchangeAuth {
  readonly mode: 'tokenExchange';
  /** The authorization server's token endpoint. */
  readonly tokenEndpoint: string;
  /** The broker's client id at that authorization server. */
  readonly clientId: string;
  /** The broker's client secret there (secret: never logged). */
  readonly clientSecret: string;
  readonly clientAuthentication: ClientAuthenticationMethod;
  /** RFC 8693 `audience`: the logical name of the backend at the authorization server. */
  readonly audience?: string;
  /** RFC 8693 / RFC 8707 `resource`: the backend's URL as a resource indicator. */
  readonly resource?: string;
  /** Space-separated scopes to ask for. */
  readonly scope?: string;
  /**
   * `aud` of the subject token the broker signs for the caller (subjectTokens.ts); default the
   * token endpoint URL, as RFC 7523 suggests for assertions.
   */
  readonly subjectTokenAudience: string;
}

/** `userCredential`: a personal credential (API key, access token) the person stored. */
export interface UserCredentialAuth {
  readonly mode: 'userCredential';
  /** Header that carries it; default `Authorization`. */
  readonly header: string;
  /** Text before the value; default `Bearer ` for `Authorization`, else none. */
  readonly prefix: string;
  /** What to store, shown on the broker's page (e.g. where to create a token and its scopes). */
  readonly description?: string;
}

/** A server's `auth`, with defaults applied. */
export type ServerAuth = BrokerAuth | BackstageAuth | TokenExchangeAuth | UserCredentialAuth;

/** The default: the broker's own credentials for everyone. */
export const BROKER_AUTH: BrokerAuth = { mode: 'broker' };

/** Thrown for an invalid `auth` section; the message names the key. */
export class ServerAuthError extends Error {
  readonly name = 'ServerAuthError';
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the broker sets itself on backend requests (the same list as for static headers). */
const RESERVED_HEADERS = new Set([
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'content-type',
  'accept',
  'content-length',
  'host',
  'last-event-id',
  'traceparent',
  'tracestate',
]);
const PLUGIN_ID = /^[a-z0-9][a-z0-9-]*$/;

const oneLine = (what: string) =>
  z
    .string({ invalid_type_error: `${what} must be a string` })
    .min(1, `${what} must not be empty`)
    .refine(v => !/[\r\n]/.test(v), `${what} must be one line`);

const httpUrl = (what: string) =>
  oneLine(what).refine(v => {
    try {
      const url = new URL(v);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, `${what} must be an absolute http(s) URL`);

const modeSchema = z.enum(['broker', 'backstage', 'tokenExchange', 'userCredential'], {
  errorMap: () => ({ message: `mode must be one of ${CREDENTIAL_MODES.join(', ')}` }),
});

const backstageSchema = z.object({
  mode: z.literal('backstage'),
  targetPluginId: oneLine('targetPluginId').refine(
    v => PLUGIN_ID.test(v),
    'targetPluginId must be a Backstage plugin id such as mcp-actions',
  ),
});

const tokenExchangeFields = {
  mode: z.literal('tokenExchange'),
  tokenEndpoint: httpUrl('tokenEndpoint'),
  clientId: oneLine('clientId'),
  clientAuthentication: z
    .enum(['client_secret_basic', 'client_secret_post'], {
      errorMap: () => ({
        message: 'clientAuthentication must be client_secret_basic or client_secret_post',
      }),
    })
    .default('client_secret_basic'),
  audience: oneLine('audience').optional(),
  resource: httpUrl('resource').optional(),
  scope: oneLine('scope').optional(),
  subjectTokenAudience: oneLine('subjectTokenAudience').optional(),
};

const userCredentialSchema = z.object({
  mode: z.literal('userCredential'),
  header: oneLine('header')
    .refine(v => HEADER_NAME.test(v), 'header must be an HTTP header name')
    .refine(
      v => !RESERVED_HEADERS.has(v.toLowerCase()),
      'header is set by the broker itself and cannot carry a credential',
    )
    .optional(),
  prefix: z
    .string({ invalid_type_error: 'prefix must be a string' })
    .refine(v => !/[\r\n]/.test(v), 'prefix must be one line')
    .optional(),
  description: z.string({ invalid_type_error: 'description must be a string' }).optional(),
});

function problemOf(error: z.ZodError, at: string): ServerAuthError {
  const issue = error.issues[0];
  const key = issue.path.length > 0 ? `${at}.${issue.path.join('.')}` : at;
  // zod's own messages for a missing member say "Required"; ours already name the member.
  const message =
    issue.message === 'Required' ? `${String(issue.path.at(-1))} is required` : issue.message;
  return new ServerAuthError(`Invalid ${key}: ${message}`);
}

/**
 * Parses a server's `auth` section (`raw` as read from config or a registration's `spec.auth`;
 * undefined means `broker`). `at` is the section's key, named in every error.
 */
export function parseServerAuth(raw: unknown, at: string): ServerAuth {
  if (raw === undefined || raw === null) return BROKER_AUTH;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ServerAuthError(`Invalid ${at}: must be an object with a mode`);
  }
  const mode = modeSchema.safeParse((raw as { mode?: unknown }).mode ?? 'broker');
  if (!mode.success) throw problemOf(mode.error, `${at}.mode`);
  switch (mode.data) {
    case 'broker':
      return BROKER_AUTH;
    case 'backstage': {
      const parsed = backstageSchema.safeParse({ ...raw, mode: 'backstage' });
      if (!parsed.success) throw problemOf(parsed.error, at);
      return { mode: 'backstage', targetPluginId: parsed.data.targetPluginId };
    }
    case 'tokenExchange':
      return parseTokenExchange(raw, at);
    case 'userCredential': {
      const parsed = userCredentialSchema.safeParse({ ...raw, mode: 'userCredential' });
      if (!parsed.success) throw problemOf(parsed.error, at);
      const header = parsed.data.header ?? 'Authorization';
      const prefix =
        parsed.data.prefix ?? (header.toLowerCase() === 'authorization' ? 'Bearer ' : '');
      return {
        mode: 'userCredential',
        header,
        prefix,
        ...(parsed.data.description === undefined ? {} : { description: parsed.data.description }),
      };
    }
    default:
      throw new ServerAuthError(`Invalid ${at}.mode`);
  }
}

const tokenExchangeSchema = z.object({
  ...tokenExchangeFields,
  clientSecret: oneLine('clientSecret'),
});

function parseTokenExchange(raw: object, at: string): TokenExchangeAuth {
  const parsed = tokenExchangeSchema.safeParse({ ...raw, mode: 'tokenExchange' });
  if (!parsed.success) throw problemOf(parsed.error, at);
  const data = parsed.data;
  return {
    mode: 'tokenExchange',
    tokenEndpoint: data.tokenEndpoint,
    clientId: data.clientId,
    clientSecret: data.clientSecret,
    clientAuthentication: data.clientAuthentication,
    ...(data.audience === undefined ? {} : { audience: data.audience }),
    ...(data.resource === undefined ? {} : { resource: data.resource }),
    ...(data.scope === undefined ? {} : { scope: data.scope }),
    subjectTokenAudience: data.subjectTokenAudience ?? data.tokenEndpoint,
  };
}

/** True when the mode presents a credential of the person (not the broker's own). */
export function isPersonalMode(mode: CredentialMode): boolean {
  return mode !== 'broker';
}
