/*
 * Turns body-parser failures into `@backstage/errors`-style errors, so Backstage's error
 * middleware renders them like every other error: 413 for a body over the limit, 400 for
 * malformed JSON, 415 for an unsupported charset or encoding.
 */
import { CustomErrorBase, InputError, isError } from '@backstage/errors';

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

/** 415: the body's content type, charset or encoding is not supported. */
export class UnsupportedMediaTypeError extends CustomErrorBase {
  name = 'UnsupportedMediaTypeError' as const;
  get statusCode(): number {
    return 415;
  }
}

/** Maps one body-parser error (which carries a `type`) to the error the client sees. */
export function toBodyError(error: unknown, limitDescription: string): Error {
  const type = isError(error) ? (error as { type?: unknown }).type : undefined;
  switch (type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(
        `request body is larger than the ${limitDescription} limit`,
      );
    case 'entity.parse.failed':
      return new InputError(`malformed JSON body: ${(error as Error).message}`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeError((error as Error).message);
    case 'request.aborted':
    case 'request.size.invalid':
      return new InputError((error as Error).message);
    default:
      return isError(error) ? error : new Error(String(error));
  }
}
