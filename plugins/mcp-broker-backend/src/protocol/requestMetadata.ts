/*
 * Validation of a 2026-07-28 request's metadata (spec §9; docs/mcp-2026-07-28-notes.md §2–§4):
 * the `_meta` envelope, its agreement with the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
 * headers, the protocol version, and the client capabilities a step needs.
 *
 * Pure: the caller hands over the method, the params and the three header values (undefined when
 * absent) and gets either the request's context or a classified refusal carrying the HTTP status,
 * the JSON-RPC code, a message that says what to fix, and the specification's `data`. The checks
 * run in the order the official SDK uses, so a request with several faults gets the same answer
 * from the broker as from an SDK server: envelope (-32602) → version/method header mismatch
 * (-32020) → unsupported version (-32022) → missing or mismatched headers (-32020). The capability
 * check (-32021) is separate because only the step that needs a capability knows it.
 */
import { isPlainObject, JsonRpcErrorCode } from './jsonRpc';
import { mcpNameSource } from './mcpMethods';
import { ModernMetaKey, requestMetaOf } from './modernEra';
import {
  ALL_PROTOCOL_VERSIONS,
  isSupportedModernProtocolVersion,
  MODERN_PROTOCOL_VERSION,
} from './versions';

/** The client's name and version as it reported them (self-reported, for display only). */
export interface ModernClientInfo {
  name: string;
  version: string;
  [key: string]: unknown;
}

/** What a valid 2026-07-28 request tells about itself. */
export interface ModernRequestContext {
  protocolVersion: string;
  /** The capabilities declared for this request (never inferred from earlier requests). */
  clientCapabilities: Record<string, unknown>;
  clientInfo?: ModernClientInfo;
  logLevel?: string;
}

/** A refusal of a 2026-07-28 request, ready to be written as an HTTP status and JSON-RPC error. */
export interface ModernRequestError {
  httpStatus: 400 | 404;
  code: number;
  message: string;
  data?: unknown;
}

/** The outcome of {@link validateRequestMetadata}. */
export type RequestMetadataResult =
  { ok: true; context: ModernRequestContext } | { ok: false; error: ModernRequestError };

/** The header values the validation compares with the body; undefined when absent. */
export interface RequestMetadataHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

const LOG_LEVELS = new Set([
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
]);

/**
 * Whether a log message (`notifications/message`) of `level` goes to a 2026-07-28 client that
 * asked for `requested` (`_meta` logLevel) on its request: never without a requested level,
 * else at that severity or above (the order of LOG_LEVELS).
 */
export function logLevelAllows(requested: string | undefined, level: unknown): boolean {
  if (requested === undefined) return false;
  const order = [...LOG_LEVELS];
  const at = typeof level === 'string' ? order.indexOf(level) : -1;
  // A message with an unknown level is let through only to a client that wants everything.
  return at === -1 ? requested === 'debug' : at >= order.indexOf(requested);
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes a header value that may use the specification's Base64 sentinel
 * (`=?base64?<base64 of UTF-8>?=`); undefined when the sentinel is malformed.
 */
export function decodeMcpHeaderValue(value: string): string | undefined {
  if (!value.startsWith(SENTINEL_PREFIX) || !value.endsWith(SENTINEL_SUFFIX)) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
  const bytes = Buffer.from(encoded, 'base64');
  const decoded = bytes.toString('utf8');
  // Reject bytes that are not UTF-8 (they would not round-trip).
  return Buffer.from(decoded, 'utf8').equals(bytes) ? decoded : undefined;
}

/**
 * A header value as a sender writes it: unchanged when it is plain visible ASCII (spaces inside
 * allowed) and does not look like the sentinel, else `=?base64?<base64 of UTF-8>?=`.
 */
export function encodeMcpHeaderValue(value: string): string {
  const plain =
    /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith(SENTINEL_PREFIX);
  return plain
    ? value
    : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** A -32020 refusal (HTTP 400): `message` says what differs and what to send instead. */
export function headerMismatch(message: string, header: string, body: string): ModernRequestError {
  return {
    httpStatus: 400,
    code: JsonRpcErrorCode.HeaderMismatch,
    message: `Header mismatch: ${message}`,
    data: { mismatch: { header, body } },
  };
}

function invalidMeta(message: string, missing?: string[]): ModernRequestError {
  return {
    httpStatus: 400,
    code: JsonRpcErrorCode.InvalidParams,
    message: `Invalid _meta for protocol 2026-07-28: ${message}`,
    ...(missing === undefined ? {} : { data: { missing } }),
  };
}

/** The first problem of the envelope, or the context it describes. */
function readEnvelope(
  meta: Record<string, unknown> | undefined,
): ModernRequestError | ModernRequestContext {
  const missing = [ModernMetaKey.protocolVersion, ModernMetaKey.clientCapabilities].filter(
    key => meta === undefined || !(key in meta),
  );
  if (meta === undefined || missing.length > 0) {
    return invalidMeta(
      `params._meta must carry ${missing.map(key => `"${key}"`).join(' and ')} ` +
        '(the protocol version and the client capabilities, {} when none) on every request',
      missing,
    );
  }
  const version = meta[ModernMetaKey.protocolVersion];
  if (typeof version !== 'string' || version === '') {
    return invalidMeta(`"${ModernMetaKey.protocolVersion}" must be a version string`);
  }
  const capabilities = meta[ModernMetaKey.clientCapabilities];
  if (!isPlainObject(capabilities)) {
    return invalidMeta(`"${ModernMetaKey.clientCapabilities}" must be an object ({} when none)`);
  }
  const context: ModernRequestContext = {
    protocolVersion: version,
    clientCapabilities: capabilities,
  };
  const info = meta[ModernMetaKey.clientInfo];
  if (info !== undefined) {
    if (!isPlainObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string') {
      return invalidMeta(
        `"${ModernMetaKey.clientInfo}" must be an object with string "name" and "version"`,
      );
    }
    context.clientInfo = info as ModernClientInfo;
  }
  const level = meta[ModernMetaKey.logLevel];
  if (level !== undefined) {
    if (typeof level !== 'string' || !LOG_LEVELS.has(level)) {
      return invalidMeta(
        `"${ModernMetaKey.logLevel}" must be one of ${[...LOG_LEVELS].join(', ')}`,
      );
    }
    context.logLevel = level;
  }
  return context;
}

/**
 * Validates the metadata of a 2026-07-28 request (one the era selection called modern; requests
 * only: the revision defines no client notifications over HTTP, so a modern notification POST
 * is answered 202 and dropped, as the SDK does): the
 * `_meta` envelope, the headers against the body, and the protocol version. `initialize` here
 * means a handshake that came with a modern header or a modern claim: with a header and no valid
 * claim it is a mismatch; with a valid claim it passes (the caller answers 404, -32601: the
 * modern era has no `initialize`).
 */
export function validateRequestMetadata(
  method: string,
  params: unknown,
  headers: RequestMetadataHeaders,
): RequestMetadataResult {
  const trim = (value: string | undefined) => value?.replace(/^[ \t]+|[ \t]+$/g, '');
  const headerVersion = trim(headers.protocolVersion);
  const headerMethod = trim(headers.method);
  const headerName = trim(headers.name);
  const meta = requestMetaOf(params);

  if (method === 'initialize' && (meta === undefined || !(ModernMetaKey.protocolVersion in meta))) {
    return {
      ok: false,
      error: headerMismatch(
        `initialize is the 2025 handshake but MCP-Protocol-Version names ${headerVersion}; ` +
          'send initialize with a 2025 version header, or skip it and send requests with _meta',
        headerVersion ?? '(missing)',
        'initialize',
      ),
    };
  }

  const envelope = readEnvelope(meta);
  if ('httpStatus' in envelope) return { ok: false, error: envelope };
  const context = envelope;

  if (headerVersion !== undefined && headerVersion !== context.protocolVersion) {
    return {
      ok: false,
      error: headerMismatch(
        `MCP-Protocol-Version header "${headerVersion}" differs from ` +
          `_meta["${ModernMetaKey.protocolVersion}"] "${context.protocolVersion}"; send the same version in both`,
        headerVersion,
        context.protocolVersion,
      ),
    };
  }
  if (headerMethod !== undefined && headerMethod !== method) {
    return {
      ok: false,
      error: headerMismatch(
        `Mcp-Method header "${headerMethod}" differs from the body's method "${method}"`,
        headerMethod,
        method,
      ),
    };
  }
  if (!isSupportedModernProtocolVersion(context.protocolVersion)) {
    const sessionEra = ALL_PROTOCOL_VERSIONS.includes(context.protocolVersion);
    return {
      ok: false,
      error: {
        httpStatus: 400,
        code: JsonRpcErrorCode.UnsupportedProtocolVersion,
        message: sessionEra
          ? `Unsupported protocol version "${context.protocolVersion}" in _meta: that version ` +
            'starts with the initialize handshake instead; send initialize, or put ' +
            `"${MODERN_PROTOCOL_VERSION}" in _meta and the MCP-Protocol-Version header`
          : `Unsupported protocol version "${context.protocolVersion}": this server speaks ` +
            `${ALL_PROTOCOL_VERSIONS.join(', ')}; retry with one of them`,
        data: { supported: [...ALL_PROTOCOL_VERSIONS], requested: context.protocolVersion },
      },
    };
  }
  if (headerVersion === undefined) {
    return {
      ok: false,
      error: headerMismatch(
        `the MCP-Protocol-Version header is required on every request; send "${context.protocolVersion}"`,
        '(missing)',
        context.protocolVersion,
      ),
    };
  }
  if (headerMethod === undefined) {
    return {
      ok: false,
      error: headerMismatch(
        `the Mcp-Method header is required on every request; send "${method}"`,
        '(missing)',
        method,
      ),
    };
  }
  const nameMismatch = checkNameHeader(method, params, headerName);
  if (nameMismatch !== undefined) return { ok: false, error: nameMismatch };
  return { ok: true, context };
}

/** The `Mcp-Name` rule: required and equal (after decoding) where the body has the member. */
function checkNameHeader(
  method: string,
  params: unknown,
  header: string | undefined,
): ModernRequestError | undefined {
  const source = mcpNameSource(method);
  if (source === undefined) return undefined;
  const value = isPlainObject(params) ? params[source] : undefined;
  const bodyValue = typeof value === 'string' ? value : undefined;
  if (header === undefined) {
    // Without the body member the request fails its params validation instead.
    if (bodyValue === undefined) return undefined;
    return headerMismatch(
      `the Mcp-Name header is required for ${method}; send params.${source} ` +
        '(Base64-encoded as =?base64?…?= when it is not plain ASCII)',
      '(missing)',
      bodyValue,
    );
  }
  const decoded = decodeMcpHeaderValue(header);
  if (decoded === undefined) {
    return headerMismatch(
      'the Mcp-Name header has a malformed =?base64?…?= value',
      header,
      bodyValue ?? '',
    );
  }
  if (bodyValue !== undefined && decoded !== bodyValue) {
    return headerMismatch(
      `Mcp-Name header "${decoded}" differs from params.${source} "${bodyValue}"`,
      header,
      bodyValue,
    );
  }
  return undefined;
}

/**
 * The capabilities in `required` that `declared` lacks, in the same shape (undefined when none
 * is missing). A top-level capability must be present, and so must each nested member the
 * requirement names; a bare `elicitation: {}` counts as `elicitation.form` (its 2025 meaning).
 */
export function missingClientCapabilities(
  required: Readonly<Record<string, Record<string, unknown>>>,
  declared: Readonly<Record<string, unknown>>,
): Record<string, Record<string, unknown>> | undefined {
  const missing: Record<string, Record<string, unknown>> = {};
  for (const [capability, members] of Object.entries(required)) {
    const present = declared[capability];
    if (!isPlainObject(present)) {
      missing[capability] = members;
      continue;
    }
    const lacking: Record<string, unknown> = {};
    for (const [member, value] of Object.entries(members)) {
      const implied =
        capability === 'elicitation' &&
        member === 'form' &&
        present.form === undefined &&
        present.url === undefined;
      if (present[member] === undefined && !implied) lacking[member] = value;
    }
    if (Object.keys(lacking).length > 0) missing[capability] = lacking;
  }
  return Object.keys(missing).length === 0 ? undefined : missing;
}

/**
 * The client capability an input request (server-to-client request carried in an
 * `input_required` result) needs, or undefined for a method that is not an input request.
 */
export function requiredCapabilitiesForInputRequest(
  method: string,
  params: Readonly<Record<string, unknown>> | undefined,
): Record<string, Record<string, unknown>> | undefined {
  switch (method) {
    case 'elicitation/create':
      return params?.mode === 'url' ? { elicitation: { url: {} } } : { elicitation: { form: {} } };
    case 'sampling/createMessage':
      return params?.tools !== undefined || params?.toolChoice !== undefined
        ? { sampling: { tools: {} } }
        : { sampling: {} };
    case 'roots/list':
      return { roots: {} };
    default:
      return undefined;
  }
}

/** The capabilities of `capabilities` by name: `elicitation.url` for a member, `roots` for none. */
export function capabilityNames(capabilities: Record<string, Record<string, unknown>>): string[] {
  return Object.entries(capabilities).flatMap(([capability, members]) =>
    Object.keys(members).length === 0
      ? [capability]
      : Object.keys(members).map(member => `${capability}.${member}`),
  );
}

/** The -32021 refusal for capabilities a request needed and did not declare (HTTP 400). */
export function missingCapabilityError(
  missing: Record<string, Record<string, unknown>>,
  why: string,
): ModernRequestError {
  const names = capabilityNames(missing);
  return {
    httpStatus: 400,
    code: JsonRpcErrorCode.MissingRequiredClientCapability,
    message:
      `Missing required client capabilities: ${names.join(', ')} (${why}); declare them in ` +
      `_meta["${ModernMetaKey.clientCapabilities}"] to continue`,
    data: { requiredCapabilities: missing },
  };
}

/**
 * The -32021 refusal (HTTP 400) of a request that needs a client extension it did not declare
 * (the tasks extension's own wording and `data`, docs/contracts/tasks-and-apps.md §2.13 E4).
 */
export function missingExtensionError(extension: string): ModernRequestError {
  return {
    httpStatus: 400,
    code: JsonRpcErrorCode.MissingRequiredClientCapability,
    message: 'Missing required client capability',
    data: { requiredCapabilities: { extensions: { [extension]: {} } } },
  };
}

/** The 404 / -32601 answer for a method the 2026-07-28 revision does not have. */
export function unknownModernMethodError(method: string): ModernRequestError {
  return {
    httpStatus: 404,
    code: JsonRpcErrorCode.MethodNotFound,
    message: `Method not found: ${method} is not a method of protocol 2026-07-28`,
  };
}
