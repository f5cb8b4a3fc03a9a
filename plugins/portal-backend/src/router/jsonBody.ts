/*
 * The portal's one body reader, in front of every route (spec §5): JSON only
 * (`application/json`, or `application/merge-patch+json` for PATCH), UTF-8 only, at most
 * 64 KiB, and the whole body within `timeoutMs` (issue #20). Oversize bodies are refused on
 * their declared length before a byte is read, chunked ones as soon as they pass the limit;
 * the connection is then closed so that nobody holds a socket with a body the portal will
 * not read. The parsed body is `req.body` (undefined without a body).
 */
import { InputError } from '@backstage/errors';
import { readUtf8RequestBody } from '@devportal/backend-request-body';
import type { RequestHandler } from 'express';
import { toBodyError, UnsupportedMediaTypeError } from './bodyErrors';

/** Largest accepted request body (spec §5). */
export const MAX_BODY_BYTES = 64 * 1024;

const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** Middleware that reads and parses every request's JSON body within the portal's limits. */
export function jsonBody(options: { timeoutMs: number }): RequestHandler {
  const limits = { maxBytes: MAX_BODY_BYTES, timeoutMs: options.timeoutMs };
  return async (req, res, next) => {
    // req.is() is null without a body and false for a body of another type.
    if (req.is(JSON_TYPES) === false) {
      // The body stays unread: close the connection after the answer rather than wait for it.
      res.setHeader('Connection', 'close');
      next(
        new UnsupportedMediaTypeError(
          `request body must be JSON (Content-Type ${JSON_TYPES.join(' or ')}), got ${req.headers['content-type']}`,
        ),
      );
      return;
    }
    let body: unknown;
    try {
      const text = await readUtf8RequestBody(req, res, limits);
      body = text === undefined || text === '' ? undefined : parseJson(text);
    } catch (error) {
      next(toBodyError(error));
      return;
    }
    req.body = body;
    next();
  };
}

function parseJson(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`malformed JSON body: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null) {
    throw new InputError('malformed JSON body: the body must be a JSON object');
  }
  return value;
}
