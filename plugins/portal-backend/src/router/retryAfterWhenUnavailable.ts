/*
 * Every 503 of the portal tells the client when to try again: the store, the auth backend or the
 * permission backend is unavailable for a moment (a database restart, a burst beyond the
 * connection budget), which retrying fixes. Express error middleware: it only adds the header and
 * hands the error on to Backstage's error handler, which renders the body.
 */
import type { ErrorRequestHandler } from 'express';

/** Seconds a client should wait before retrying a request answered 503. */
export const RETRY_AFTER_SECONDS = 5;

/** Sets `Retry-After` on the answer to a ServiceUnavailableError (or any error with status 503). */
export const retryAfterWhenUnavailable: ErrorRequestHandler = (error, _req, res, next) => {
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  const unavailable =
    (error as Error | undefined)?.name === 'ServiceUnavailableError' || status === 503;
  if (unavailable && !res.headersSent) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
  next(error);
};
