/*
 * The names of the stateless MCP revision (2026-07-28) and the choice of era per request.
 *
 * One endpoint serves both eras (spec §9, docs/mcp-2026-07-28-notes.md §1): a request whose
 * `params._meta` carries the protocol-version key (the "envelope claim") is modern whatever else
 * is wrong with it (the validation in requestMetadata.ts then says what), `initialize` without
 * a valid modern claim is the legacy handshake, and a modern `MCP-Protocol-Version` header makes
 * a request modern even without a claim (so that it is refused with -32602 naming the missing
 * `_meta` instead of being served as if it were legacy). Everything else is legacy traffic and
 * goes where it went before this module existed. Pure functions, no HTTP.
 */
import { isPlainObject } from './jsonRpc';
import { isModernProtocolVersion } from './versions';

/** The reserved `_meta` keys of the stateless revision (`schema.ts` `*MetaObject`). */
export const ModernMetaKey = {
  /** Request: the protocol version of this request (required). */
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  /** Request: the client's capabilities for this request (required). */
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  /** Request: the client's name and version (optional, SHOULD). */
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  /** Request: the lowest log level the client wants for this request (optional, deprecated). */
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** Result: the server's name and version (SHOULD be on every result). */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  /** Listen stream: the id of the `subscriptions/listen` request a message belongs to. */
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** The request headers that mirror the body (lower case, as Node presents them). */
export const ModernHeader = {
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  /** Prefix of the headers mirroring `x-mcp-header` tool arguments (`Mcp-Param-{Name}`). */
  paramPrefix: 'mcp-param-',
} as const;

/** Which protocol a request is to be served with. */
export type ProtocolEra = 'modern' | 'legacy';

/** The `_meta` object of a request's params, when it is an object. */
export function requestMetaOf(params: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(params)) return undefined;
  return isPlainObject(params._meta) ? params._meta : undefined;
}

/** True when the params carry the protocol-version `_meta` key (valid or not). */
export function hasEnvelopeClaim(params: unknown): boolean {
  const meta = requestMetaOf(params);
  return meta !== undefined && ModernMetaKey.protocolVersion in meta;
}

/** True when the claim names a modern version and carries the other required key. */
function hasValidModernClaim(params: unknown): boolean {
  const meta = requestMetaOf(params);
  const version = meta?.[ModernMetaKey.protocolVersion];
  return (
    typeof version === 'string' &&
    isModernProtocolVersion(version) &&
    isPlainObject(meta?.[ModernMetaKey.clientCapabilities])
  );
}

/**
 * The era of one POSTed JSON-RPC request or notification (the body already parsed), from the
 * body first and the `MCP-Protocol-Version` header second. Never throws; responses posted by a
 * client, batches and anything that is not an object are legacy (only sessions have them).
 */
export function requestEra(body: unknown, protocolVersionHeader: string | undefined): ProtocolEra {
  if (!isPlainObject(body) || typeof body.method !== 'string') return 'legacy';
  const headerIsModern =
    protocolVersionHeader !== undefined && isModernProtocolVersion(protocolVersionHeader.trim());
  if (body.method === 'initialize') {
    // The handshake is legacy by definition; a modern header on it is a mismatch that the
    // modern validation reports (-32020), and a valid modern claim makes it a modern request
    // for a method the modern era does not have (404, -32601).
    return hasValidModernClaim(body.params) || headerIsModern ? 'modern' : 'legacy';
  }
  return hasEnvelopeClaim(body.params) || headerIsModern ? 'modern' : 'legacy';
}

/** The `_meta` keys that describe a 2026-07-28 request to its receiver (not forwarded). */
const REQUEST_ENVELOPE_KEYS: readonly string[] = [
  ModernMetaKey.protocolVersion,
  ModernMetaKey.clientCapabilities,
  ModernMetaKey.clientInfo,
  ModernMetaKey.logLevel,
];

/**
 * The params without the request envelope in `_meta` (the broker answers it itself; a 2025
 * backend must not see another era's keys); other `_meta` members such as `progressToken`
 * stay, and a `_meta` left empty is dropped.
 */
export function withoutRequestEnvelope(
  params: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const meta = requestMetaOf(params);
  if (params === undefined) return {};
  if (meta === undefined) return params;
  const { _meta: _envelope, ...rest } = params;
  const kept = Object.fromEntries(
    Object.entries(meta).filter(([key]) => !REQUEST_ENVELOPE_KEYS.includes(key)),
  );
  return Object.keys(kept).length === 0 ? rest : { ...rest, _meta: kept };
}
