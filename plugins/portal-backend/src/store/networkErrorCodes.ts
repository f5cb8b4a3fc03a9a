/*
 * Node's error codes of a connection that failed or broke: the store's backing service
 * (the database or the Kubernetes API server) is unreachable right now, not wrong.
 */

/** Socket and DNS error codes both stores map to "unavailable, retry later". */
export const NODE_NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);
