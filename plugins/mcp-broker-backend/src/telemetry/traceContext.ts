/*
 * The client's W3C trace context, read as docs/contracts/tasks-and-apps.md §4 says: from
 * `params._meta.traceparent`/`tracestate` (where the MCP semantic conventions carry it) or the
 * HTTP headers, validated and bounded before any propagator sees it, so a client cannot make the
 * broker carry malformed or unbounded values to every backend.
 *
 * - `traceparent`: W3C Trace Context Level 1 — `00-<32 hex>-<16 hex>-<2 hex>` in lower case,
 *   trace id and parent id not all zeros, version `ff` invalid, a higher version read from its
 *   first 55 characters when a `-` or the end follows. Invalid → ignored, never an error.
 * - Precedence: a valid `_meta.traceparent`, else a valid header, else none (a new trace). When
 *   both are valid and differ, the header's context is returned as a link. `tracestate` comes only
 *   from the carrier its `traceparent` came from.
 * - `tracestate`: list members `key=value` separated by commas (optional spaces); a member that
 *   breaks the grammar, or a repeated key, discards the whole value; at most 32 members and 512
 *   characters — beyond either, members longer than 128 characters go first, then members from
 *   the end, until both hold (W3C §3.3.1.5).
 * - `baggage` is never read.
 */
import { isPlainObject } from '../protocol/jsonRpc';

/** W3C Trace Context: the most list-members a `tracestate` may carry. */
export const MAX_TRACESTATE_MEMBERS = 32;
/** W3C Trace Context: the longest `tracestate` a vendor must propagate. */
export const MAX_TRACESTATE_LENGTH = 512;
/** W3C Trace Context: members longer than this are the first dropped when a value is too big. */
const LONG_TRACESTATE_MEMBER = 128;

/** Header-like carrier (Node's incoming headers: lower-case names, a value or several). */
export type TraceCarrier = Readonly<Record<string, string | string[] | undefined>>;

/** The trace context chosen for a client request. */
export interface ClientTraceContext {
  /** `traceparent` (and `tracestate`) to continue; empty: a new trace. */
  readonly carrier: Readonly<Record<string, string>>;
  /** The header's context when `_meta` carried another valid one (a span link). */
  readonly link?: Readonly<Record<string, string>>;
}

const TRACEPARENT_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const TRACEPARENT_ANY = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ALL_ZEROS = /^0+$/;
// key = simple-key / multi-tenant-key (W3C Trace Context §3.3.1.3.1)
const TRACESTATE_KEY =
  /^(?:[a-z][_0-9a-z\-*/]{0,255}|[a-z0-9][_0-9a-z\-*/]{0,240}@[a-z][_0-9a-z\-*/]{0,13})$/;
// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** `value` as a valid version-00 `traceparent`, or undefined. */
export function validTraceparent(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const head = value.slice(0, 55);
  if (value.length > 55 && value[55] !== '-') return undefined;
  const match = TRACEPARENT_ANY.exec(head);
  if (match === null) return undefined;
  const [, version, traceId, parentId] = match;
  if (version === 'ff' || ALL_ZEROS.test(traceId) || ALL_ZEROS.test(parentId)) return undefined;
  if (version === '00' && (value.length !== 55 || !TRACEPARENT_00.test(value))) return undefined;
  // A higher version is read as version 00 from its first 55 characters.
  return `00${head.slice(2)}`;
}

/**
 * `value` (one header, several, or a `_meta` string) as a valid `tracestate` within W3C's
 * bounds, or undefined (absent, malformed, a repeated key, or nothing left after the bounds).
 */
export function validTracestate(value: unknown): string | undefined {
  let joined: string;
  if (typeof value === 'string') joined = value;
  else if (Array.isArray(value) && value.every(item => typeof item === 'string')) {
    joined = value.join(',');
  } else return undefined;
  // A value far beyond the bounds is not split whole (the grammar allows 32 members of 512 characters).
  if (joined.length > 32 * (MAX_TRACESTATE_LENGTH + 2)) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const raw of joined.split(',')) {
    const member = raw.trim();
    if (member === '') continue;
    const equals = member.indexOf('=');
    if (equals <= 0) return undefined;
    const key = member.slice(0, equals);
    if (!TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(equals + 1))) {
      return undefined;
    }
    if (keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
  }
  const fits = (list: string[]) =>
    list.length <= MAX_TRACESTATE_MEMBERS && list.join(',').length <= MAX_TRACESTATE_LENGTH;
  let kept = members;
  if (!fits(kept)) kept = kept.filter(member => member.length <= LONG_TRACESTATE_MEMBER);
  while (!fits(kept)) kept = kept.slice(0, -1);
  return kept.length === 0 ? undefined : kept.join(',');
}

/** The trace context of a client request from its headers and `params._meta` (file comment). */
export function clientTraceContext(headers: TraceCarrier, meta: unknown): ClientTraceContext {
  const fromHeaders = carrierOf(
    typeof headers.traceparent === 'string' ? headers.traceparent : undefined,
    headers.tracestate,
  );
  const fromMeta = isPlainObject(meta) ? carrierOf(meta.traceparent, meta.tracestate) : undefined;
  if (fromMeta === undefined) return { carrier: fromHeaders ?? {} };
  if (fromHeaders === undefined || fromHeaders.traceparent === fromMeta.traceparent) {
    return { carrier: fromMeta };
  }
  return { carrier: fromMeta, link: fromHeaders };
}

function carrierOf(traceparent: unknown, tracestate: unknown): Record<string, string> | undefined {
  const parent = validTraceparent(traceparent);
  if (parent === undefined) return undefined;
  const state = validTracestate(tracestate);
  return state === undefined ? { traceparent: parent } : { traceparent: parent, tracestate: state };
}

/** The `_meta` keys of trace context (and baggage) a client may send. */
const TRACE_META_KEYS = ['traceparent', 'tracestate', 'baggage'];

/**
 * `params` as a backend request carries them: the client's `_meta` trace context and baggage
 * removed, the broker's own (`fields`, the CLIENT span's `traceparent`/`tracestate`) put in their
 * place, beside the HTTP headers; an emptied `_meta` is dropped. The same object when nothing
 * changes.
 */
export function withTraceMeta(
  params: Record<string, unknown>,
  fields: Readonly<Record<string, string>> | undefined,
): Record<string, unknown> {
  const meta = isPlainObject(params._meta) ? params._meta : undefined;
  const carried = fields !== undefined && Object.keys(fields).length > 0;
  if (!carried && (meta === undefined || !TRACE_META_KEYS.some(key => key in meta))) {
    return params;
  }
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(meta ?? {})) {
    if (!TRACE_META_KEYS.includes(key)) kept[key] = value;
  }
  if (carried) Object.assign(kept, fields);
  const { _meta: _client, ...rest } = params;
  return Object.keys(kept).length === 0 ? rest : { ...rest, _meta: kept };
}
