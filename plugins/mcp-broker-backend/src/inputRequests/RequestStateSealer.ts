/*
 * The broker's `requestState` (spec §9; docs/mcp-2026-07-28-notes.md §7): the opaque string a
 * 2026-07-28 client gets with an `input_required` result and must send back, unchanged, with its
 * retry.
 *
 * Format: `v1.<payload>.<mac>`, payload = base64url(JSON), mac = base64url(HMAC-SHA256(key,
 * "mcp-broker/requestState/v1." + payload)). Signed, not encrypted: the payload holds nothing
 * secret — the principal and the tool are the client's own, the arguments only as a digest, the
 * held call's id is a random handle that is worthless without the principal's token, and a
 * modern backend's own `requestState` is opaque to the broker and was shown to the same client
 * by that backend under the same rules. It is carried byte for byte (`backendRequestState`).
 *
 * Guarantees when `open` returns: the state was sealed by a broker holding one of the same keys
 * (every replica shares them: config `mcpBroker.requestStateSecret` or the rotating key ring; a
 * state sealed before a rotation opens with the previous key until it expires), for this
 * principal, this method and name (the tool), on the same curated endpoint (or /mcp; spec §13),
 * and arguments with the same canonical JSON; it has
 * not expired (`elicitationTtl`); and no earlier `open` on any replica sharing the nonce store got
 * it (single use). The checks run from the cheapest to the one that changes state, so a refused
 * foreign or tampered state does not use up the nonce of the rightful owner.
 *
 * Failure modes: every refusal is a {@link RequestStateRefusal} with a reason and a message that
 * says what to do (start the call again without requestState); a store failure propagates (the
 * caller answers 5xx: the state was not used).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { ModernRequestError } from '../protocol/requestMetadata';
import type { RequestStateNonceStore } from './requestStateNonces';
import { MIN_REQUEST_STATE_KEY_BYTES, type HmacKeys } from './requestStateKey';

const VERSION = 'v1';
const MAC_DOMAIN = 'mcp-broker/requestState/v1.';
const NONCE_BYTES = 16;
/** Longest token `open` looks at; anything longer is not one of ours. */
const MAX_TOKEN_CHARS = 256 * 1024;

/** The request a state belongs to; every field must match when it comes back. */
export interface RequestStateBinding {
  /** The authenticated caller, e.g. `user:default/alice` or `service:<subject>`. */
  principal: string;
  /** The request method: `tools/call`, `prompts/get` or `resources/read`. */
  method: string;
  /** The tool or prompt name, or resource URI, as the client sent it. */
  name: string;
  /** The request's arguments (absent = `{}`); bound through a digest of their canonical JSON. */
  arguments?: unknown;
  /** The curated endpoint the request came through (absent on /mcp, spec §13). */
  endpoint?: string;
}

/** What the broker keeps inside its state for the retry. */
export interface RequestStateContents {
  /** Id of the held backend call the retry resumes (legacy backends). */
  callId?: string;
  /** The backend server the retry goes to. */
  backend?: string;
  /** A modern backend's own `requestState`, byte for byte. */
  backendRequestState?: string;
}

/** An opened state: its contents and when it would have expired. */
export interface OpenedRequestState extends RequestStateContents {
  expiresAt: number;
}

/** Why a `requestState` was refused. */
export type RequestStateRefusalReason =
  | 'malformed'
  | 'tampered'
  | 'expired'
  | 'replayed'
  | 'foreign-principal'
  | 'foreign-request'
  | 'foreign-endpoint'
  | 'foreign-arguments'
  | 'call-ended'
  | 'holder-gone';

const RESTART = 'send the request again without requestState and inputResponses to start over';

const MESSAGES: Record<RequestStateRefusalReason, string> = {
  malformed: `requestState is not one this server issued; ${RESTART}`,
  tampered: `requestState was altered or issued under another key; send it back unchanged, or ${RESTART}`,
  expired: `requestState has expired (input must arrive within the elicitation TTL); ${RESTART}`,
  replayed: `requestState was already used (each one answers a single retry); ${RESTART}`,
  'foreign-principal': `requestState was issued to another caller; ${RESTART}`,
  'foreign-request': `requestState was issued for another method or name; retry the same request it came with, or ${RESTART}`,
  'foreign-endpoint': `requestState was issued on another MCP endpoint; retry on the endpoint URL the request came through, or ${RESTART}`,
  'foreign-arguments': `requestState was issued for other arguments; retry with the arguments of the original request, or ${RESTART}`,
  'call-ended': `the call this requestState belongs to is no longer held (it ended, was cancelled, or its broker restarted); ${RESTART}`,
  'holder-gone': `the broker replica that ran the call this requestState belongs to stopped, and the call's result is lost with it; ${RESTART}`,
};

/** A refused `requestState`: HTTP 400, JSON-RPC -32602, nothing reaches a backend. */
export class RequestStateRefusal extends Error {
  readonly name = 'RequestStateRefusal';

  constructor(readonly reason: RequestStateRefusalReason) {
    super(`Invalid requestState: ${MESSAGES[reason]}`);
  }

  /** The refusal as the client is to see it. */
  toModernError(): ModernRequestError {
    return {
      httpStatus: 400,
      code: JsonRpcErrorCode.InvalidParams,
      message: this.message,
      data: { reason: this.reason },
    };
  }
}

interface Payload {
  /** principal */
  p: string;
  /** method */
  m: string;
  /** name */
  n: string;
  /** digest of the canonical arguments */
  a: string;
  /** expiry, epoch ms */
  e: number;
  /** nonce */
  u: string;
  /** curated endpoint (absent on /mcp) */
  x?: string;
  c?: string;
  b?: string;
  s?: string;
}

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(item => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)); // keys of one object are unique
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function argumentsDigest(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('base64url');
}

/** Seals and opens the broker's `requestState` (see the file comment). */
export class RequestStateSealer {
  readonly #keys: HmacKeys;
  readonly #ttlMs: number;
  readonly #nonces: RequestStateNonceStore;
  readonly #now: () => number;

  constructor(options: {
    keys: HmacKeys;
    /** Lifetime of a state (`elicitationTtl`), ms. */
    ttlMs: number;
    nonces: RequestStateNonceStore;
    now?: () => number;
  }) {
    if (options.keys.openingKeys().some(key => key.length < MIN_REQUEST_STATE_KEY_BYTES)) {
      throw new Error(
        `the requestState key must have at least ${MIN_REQUEST_STATE_KEY_BYTES} bytes`,
      );
    }
    if (!(options.ttlMs > 0)) throw new Error('the requestState lifetime must be positive');
    this.#keys = options.keys;
    this.#ttlMs = options.ttlMs;
    this.#nonces = options.nonces;
    this.#now = options.now ?? Date.now;
  }

  /** Lifetime of a state, ms (`elicitationTtl`). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /** A fresh state for `binding` carrying `contents`, good for one retry within the TTL. */
  seal(binding: RequestStateBinding, contents: RequestStateContents = {}): string {
    const payload: Payload = {
      p: binding.principal,
      m: binding.method,
      n: binding.name,
      a: argumentsDigest(binding.arguments),
      e: this.#now() + this.#ttlMs,
      u: randomBytes(NONCE_BYTES).toString('base64url'),
      ...(binding.endpoint === undefined ? {} : { x: binding.endpoint }),
      ...(contents.callId === undefined ? {} : { c: contents.callId }),
      ...(contents.backend === undefined ? {} : { b: contents.backend }),
      ...(contents.backendRequestState === undefined ? {} : { s: contents.backendRequestState }),
    };
    const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
    return `${VERSION}.${body}.${this.#mac(this.#keys.sealingKey(), body)}`;
  }

  /**
   * Verifies `token` against `binding` and uses it up. Throws {@link RequestStateRefusal} when
   * it is malformed, tampered, expired, foreign or already used.
   */
  async open(token: string, binding: RequestStateBinding): Promise<OpenedRequestState> {
    const payload = this.#verify(token);
    if (payload.e <= this.#now()) throw new RequestStateRefusal('expired');
    if (payload.p !== binding.principal) throw new RequestStateRefusal('foreign-principal');
    if (payload.m !== binding.method || payload.n !== binding.name) {
      throw new RequestStateRefusal('foreign-request');
    }
    if (payload.x !== binding.endpoint) throw new RequestStateRefusal('foreign-endpoint');
    if (payload.a !== argumentsDigest(binding.arguments)) {
      throw new RequestStateRefusal('foreign-arguments');
    }
    if (!(await this.#nonces.claim(payload.u, payload.e))) {
      throw new RequestStateRefusal('replayed');
    }
    return {
      expiresAt: payload.e,
      ...(payload.c === undefined ? {} : { callId: payload.c }),
      ...(payload.b === undefined ? {} : { backend: payload.b }),
      ...(payload.s === undefined ? {} : { backendRequestState: payload.s }),
    };
  }

  #verify(token: string): Payload {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) {
      throw new RequestStateRefusal('malformed');
    }
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION) throw new RequestStateRefusal('malformed');
    const [, body, mac] = parts;
    const given = Buffer.from(mac);
    const sealedByUs = this.#keys.openingKeys().some(key => {
      const expected = Buffer.from(this.#mac(key, body));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!sealedByUs) throw new RequestStateRefusal('tampered');
    let payload: Partial<Payload>;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      // Only a broker with our key could have signed it: a bug, refused all the same.
      throw new RequestStateRefusal('malformed');
    }
    const strings = [payload.p, payload.m, payload.n, payload.a, payload.u];
    if (!strings.every(value => typeof value === 'string') || typeof payload.e !== 'number') {
      throw new RequestStateRefusal('malformed');
    }
    return payload as Payload;
  }

  #mac(key: Buffer, body: string): string {
    return createHmac('sha256', key).update(MAC_DOMAIN).update(body).digest('base64url');
  }
}
