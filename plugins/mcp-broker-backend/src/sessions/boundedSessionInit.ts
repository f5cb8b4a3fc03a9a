/*
 * What a session keeps of the client's `initialize`: only bounded fields.
 *
 * A session record lives for the idle timeout (an hour by default) on every replica and in the
 * shared store, so whatever a client puts into `initialize` would otherwise stay in memory that
 * long: one `clientInfo` of 1 MiB held 1–1.5 MiB until DELETE. Kept are `clientInfo.name` and
 * `clientInfo.version`, each cut to {@link MAX_CLIENT_INFO_FIELD_CHARS} characters, and the
 * capabilities the broker relays or may relay (`elicitation`, `sampling`, `roots`, and of
 * `extensions` only the MCP Apps extension `io.modelcontextprotocol/ui`), which must be
 * objects and together at most {@link MAX_CLIENT_CAPABILITIES_BYTES} bytes as JSON. Everything
 * else the client sent is dropped. A malformed or oversized capability is the client's mistake
 * and is refused with a message naming it (the caller answers -32602).
 */
import { isPlainObject } from '../protocol/jsonRpc';
import { UI_EXTENSION_ID } from '../protocol/uiExtension';

/** Longest `clientInfo.name` / `clientInfo.version` kept (longer ones are cut). */
export const MAX_CLIENT_INFO_FIELD_CHARS = 256;

/** Largest accepted size of the kept client capabilities, as JSON. */
export const MAX_CLIENT_CAPABILITIES_BYTES = 4096;

/** Client capabilities a session keeps; the others are dropped. */
const KEPT_CAPABILITIES = ['elicitation', 'sampling', 'roots'] as const;

/** The part of `initialize` a session keeps. */
export interface BoundedSessionInit {
  clientCapabilities: Record<string, Record<string, unknown>>;
  clientInfo?: { name?: string; version?: string };
}

/** Reduces `initialize` params to bounded fields, or returns the reason they are refused. */
export function boundSessionInit(
  params: Record<string, unknown>,
): { ok: true; init: BoundedSessionInit } | { ok: false; message: string } {
  const declared = params.capabilities ?? {};
  if (!isPlainObject(declared)) {
    return { ok: false, message: 'params.capabilities must be an object' };
  }
  const clientCapabilities: Record<string, Record<string, unknown>> = {};
  for (const name of KEPT_CAPABILITIES) {
    const value = declared[name];
    if (value === undefined) continue;
    if (!isPlainObject(value)) {
      return { ok: false, message: `params.capabilities.${name} must be an object` };
    }
    clientCapabilities[name] = value;
  }
  const extensions = declared.extensions;
  if (isPlainObject(extensions) && extensions[UI_EXTENSION_ID] !== undefined) {
    const ui = extensions[UI_EXTENSION_ID];
    if (!isPlainObject(ui)) {
      return {
        ok: false,
        message: `params.capabilities.extensions["${UI_EXTENSION_ID}"] must be an object`,
      };
    }
    clientCapabilities.extensions = { [UI_EXTENSION_ID]: ui };
  }
  const serialized = JSON.stringify(clientCapabilities);
  const size = Buffer.byteLength(serialized);
  if (size > MAX_CLIENT_CAPABILITIES_BYTES) {
    return {
      ok: false,
      message:
        `params.capabilities (${KEPT_CAPABILITIES.join(', ')}, extensions["${UI_EXTENSION_ID}"]) ` +
        `take ${size} bytes as JSON; ` +
        `at most ${MAX_CLIENT_CAPABILITIES_BYTES} are accepted`,
    };
  }
  // A copy: the parsed values may share memory with the (much larger) request body.
  const kept = JSON.parse(serialized) as BoundedSessionInit['clientCapabilities'];
  const info = params.clientInfo;
  if (!isPlainObject(info)) return { ok: true, init: { clientCapabilities: kept } };
  const clientInfo: { name?: string; version?: string } = {};
  if (typeof info.name === 'string') clientInfo.name = cut(info.name);
  if (typeof info.version === 'string') clientInfo.version = cut(info.version);
  return { ok: true, init: { clientCapabilities: kept, clientInfo } };
}

function cut(text: string): string {
  // Copied rather than sliced: a slice can keep the whole original string alive in V8.
  return text.length <= MAX_CLIENT_INFO_FIELD_CHARS
    ? text
    : Buffer.from(text.slice(0, MAX_CLIENT_INFO_FIELD_CHARS)).toString();
}
