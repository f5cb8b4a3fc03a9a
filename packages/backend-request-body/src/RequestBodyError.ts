/*
 * The one error readUtf8RequestBody rejects with: why the body was refused and the HTTP status
 * that fits, for the caller to render in its own error format.
 */

/**
 * Why a body was refused, with the HTTP status a server should answer:
 * `too-large` 413, `timeout` 408, `unsupported-charset` and `unsupported-encoding` 415,
 * `invalid-utf8` and `incomplete` (the client closed the connection mid-body) 400.
 *
 * @public
 */
export type RequestBodyFailure =
  | 'too-large'
  | 'timeout'
  | 'unsupported-charset'
  | 'unsupported-encoding'
  | 'invalid-utf8'
  | 'incomplete';

const STATUS_BY_FAILURE: Record<RequestBodyFailure, number> = {
  'too-large': 413,
  timeout: 408,
  'unsupported-charset': 415,
  'unsupported-encoding': 415,
  'invalid-utf8': 400,
  incomplete: 400,
};

/**
 * A request body was refused. `message` says what the client should change.
 *
 * @public
 */
export class RequestBodyError extends Error {
  /** Always `RequestBodyError`. */
  readonly name = 'RequestBodyError';
  /** Why the body was refused. */
  readonly failure: RequestBodyFailure;
  /** The HTTP status that fits the failure (413, 408, 415 or 400). */
  readonly status: number;

  constructor(failure: RequestBodyFailure, message: string) {
    super(message);
    this.failure = failure;
    this.status = STATUS_BY_FAILURE[failure];
  }
}
