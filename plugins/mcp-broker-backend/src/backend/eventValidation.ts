/*
 * The gate every backend event passes before it may reach a client. Backends are not trusted:
 * anything that is not exactly a small list_changed notification of a kind the backend
 * advertised is dropped (the caller logs why).
 */
import { isPlainObject } from '../protocol/jsonRpc';
import { ListKind, listKindOfMethod } from '../protocol/listKinds';

/** Largest accepted `params` of a list_changed notification, in bytes of JSON. */
export const MAX_EVENT_PARAMS_BYTES = 1024;
/** Largest accepted event `data`, in characters. */
export const MAX_EVENT_DATA_CHARS = 8 * 1024;

/** The outcome of {@link validateListChangedEvent}. */
export type EventValidation = { ok: true; kind: ListKind } | { ok: false; reason: string };

const ALLOWED_MEMBERS = new Set(['jsonrpc', 'method', 'params']);

/**
 * Checks one message (its text) from a backend's event connection: a JSON-RPC 2.0 notification
 * (no `id`), one of the four list_changed methods, `params` absent or a small object, and a
 * kind the backend advertised (`advertised`). Anything the transport could not read as a
 * message at all (e.g. an SSE event of another type) never gets here: it is dropped as such.
 */
export function validateListChangedEvent(
  text: string,
  advertised: ReadonlySet<ListKind>,
): EventValidation {
  if (text.length > MAX_EVENT_DATA_CHARS) return { ok: false, reason: 'event too large' };
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'data is not JSON' };
  }
  if (!isPlainObject(message)) return { ok: false, reason: 'not a JSON object' };
  if (message.jsonrpc !== '2.0') return { ok: false, reason: 'not JSON-RPC 2.0' };
  if ('id' in message) return { ok: false, reason: 'has an id (not a notification)' };
  if (Object.keys(message).some(key => !ALLOWED_MEMBERS.has(key))) {
    return { ok: false, reason: 'has members other than jsonrpc, method and params' };
  }
  if (typeof message.method !== 'string') return { ok: false, reason: 'no method' };
  const kind = listKindOfMethod(message.method);
  if (kind === undefined) return { ok: false, reason: 'not a list_changed notification' };
  if (message.params !== undefined) {
    if (!isPlainObject(message.params)) return { ok: false, reason: 'params is not an object' };
    if (JSON.stringify(message.params).length > MAX_EVENT_PARAMS_BYTES) {
      return { ok: false, reason: 'params too large' };
    }
  }
  if (!advertised.has(kind)) {
    return { ok: false, reason: `${kind} listChanged was not advertised by this backend` };
  }
  return { ok: true, kind };
}
