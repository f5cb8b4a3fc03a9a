/*
 * Every 503 this backend answers says when to come back (`Retry-After`), whichever layer wrote
 * it (docs/deployment.md, "Stopping").
 *
 * Why here: the plugins set `Retry-After` on their own 503s (the portal's store and dependency
 * errors, the broker's drain), but Backstage answers some 503s before a plugin's routes see the
 * request: its HTTP router's lifecycle middleware refuses every request to a plugin from the
 * moment the plugin's shutdown hooks start until the server closes ("Service is shutting down",
 * after SIGTERM: the rest of the shutdown can take seconds) and after a start-up pause that
 * timed out ("Service has not started up yet"), without the header. No plugin can reach in
 * front of that middleware; the root HTTP router's `configure` can, for every plugin at once.
 *
 * How: an application-level middleware ahead of everything else wraps the response's
 * `writeHead`, through which every status line goes (Express's `send`, `json`, streams and
 * Node's implicit headers alike), and adds the header to a 503 that has none. Anything that set
 * its own `Retry-After` keeps it.
 */
import type { RequestHandler } from 'express';

/**
 * Seconds a 503 without its own `Retry-After` asks the client to wait: Backstage's are a
 * replica stopping or starting, where another replica (or this one, shortly) answers.
 */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Express middleware that gives every 503 without `Retry-After` one; see the file comment. */
export function retryAfterOnUnavailable(
  retryAfterSeconds: number = DEFAULT_RETRY_AFTER_SECONDS,
): RequestHandler {
  const value = String(retryAfterSeconds);
  return (_req, res, next) => {
    const writeHead = res.writeHead;
    res.writeHead = function writeHeadWithRetryAfter(
      this: typeof res,
      ...args: Parameters<typeof writeHead>
    ) {
      if (args[0] === 503 && !this.hasHeader('Retry-After')) this.setHeader('Retry-After', value);
      return writeHead.apply(this, args);
    } as typeof writeHead;
    next();
  };
}
