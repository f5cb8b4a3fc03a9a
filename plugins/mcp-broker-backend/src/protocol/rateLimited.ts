/*
 * The refusal of a request a rate limit stops (spec §12), in the protocol's terms: a JSON-RPC
 * error -32000 whose `data` says why (`reason: "rate-limited"`) and when to try again
 * (`retryAfterMs`), with a message a person can act on. The HTTP side (429, `Retry-After` in
 * whole seconds) is the router's.
 */
import { JsonRpcErrorCode, type JsonRpcErrorObject } from './jsonRpc';

/** `data.reason` of a rate-limit refusal. */
export const RATE_LIMITED_REASON = 'rate-limited';
/** `data.reason` of a refusal because the limits cannot be applied yet (fail closed). */
export const LIMITS_UNAVAILABLE_REASON = 'limits-unavailable';

/** The JSON-RPC error of a call refused by the limit `description` for `retryAfterMs`. */
export function rateLimitedError(retryAfterMs: number, description: string): JsonRpcErrorObject {
  const wait = Math.ceil(retryAfterMs / 1000);
  return {
    code: JsonRpcErrorCode.RateLimited,
    message: `Rate limit reached: ${description} for each person; retry in ${wait} s`,
    data: { reason: RATE_LIMITED_REASON, retryAfterMs },
  };
}

/**
 * The JSON-RPC error of a call refused by the quota of the person's own plan (an access grant,
 * docs/contracts/mcp-access.md §6.4): `description` says which plan allows what.
 */
export function planLimitedError(retryAfterMs: number, description: string): JsonRpcErrorObject {
  const wait = Math.ceil(retryAfterMs / 1000);
  return {
    code: JsonRpcErrorCode.RateLimited,
    message: `Rate limit reached: ${description}; retry in ${wait} s`,
    data: { reason: RATE_LIMITED_REASON, retryAfterMs, limitSource: 'plan' },
  };
}

/**
 * The JSON-RPC error of a request refused because the limits that hold for the caller cannot be
 * known yet (their groups could not be read): retryable after `retryAfterMs`.
 */
export function limitsUnavailableError(retryAfterMs: number): JsonRpcErrorObject {
  const wait = Math.ceil(retryAfterMs / 1000);
  return {
    code: JsonRpcErrorCode.RateLimited,
    message: `Rate limits cannot be applied right now: the broker could not read your groups from Backstage; retry in ${wait} s`,
    data: { reason: LIMITS_UNAVAILABLE_REASON, retryable: true, retryAfterMs },
  };
}

/** The HTTP `Retry-After` value (whole seconds, at least 1) of a wait of `retryAfterMs`. */
export function retryAfterSeconds(retryAfterMs: number): string {
  return String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
}
