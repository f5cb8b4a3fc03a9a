/*
 * Errors for refused request bodies, as `@backstage/errors`-style errors so that Backstage's
 * error middleware renders them like every other error: 413 for a body over the limit, 408
 * for one that arrives too slowly, 415 for a content type, charset or encoding the portal
 * does not read, 400 for bytes that are not UTF-8 or not JSON.
 */
import { CustomErrorBase, InputError } from '@backstage/errors';
import { RequestBodyError } from '@devportal/backend-request-body';

/**
 * 413: the request body is larger than the portal accepts. `@backstage/errors` has no
 * such class; the error middleware takes the status from `statusCode`, which is a getter
 * so that it does not appear in the serialized error body.
 */
export class PayloadTooLargeError extends CustomErrorBase {
  name = 'PayloadTooLargeError' as const;
  get statusCode(): number {
    return 413;
  }
}

/** 408: the request body did not arrive within the configured time. */
export class RequestTimeoutError extends CustomErrorBase {
  name = 'RequestTimeoutError' as const;
  get statusCode(): number {
    return 408;
  }
}

/** 415: the body's content type, charset or encoding is not supported. */
export class UnsupportedMediaTypeError extends CustomErrorBase {
  name = 'UnsupportedMediaTypeError' as const;
  get statusCode(): number {
    return 415;
  }
}

/** Maps a refused body to the error the client sees; any other error passes unchanged. */
export function toBodyError(error: unknown): unknown {
  if (!(error instanceof RequestBodyError)) return error;
  switch (error.failure) {
    case 'too-large':
      return new PayloadTooLargeError(error.message);
    case 'timeout':
      return new RequestTimeoutError(error.message);
    case 'unsupported-charset':
    case 'unsupported-encoding':
      return new UnsupportedMediaTypeError(error.message);
    default:
      return new InputError(error.message);
  }
}
