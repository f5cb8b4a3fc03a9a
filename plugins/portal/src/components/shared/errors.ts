/*
 * What a person is told when the server refuses: the server's own message (the portal and the
 * broker answer `@backstage/errors` bodies whose `error.message` says what to fix), never a bare
 * status line. The status code picks the state a page shows (forbidden, conflict, …).
 */
import { ResponseError } from '@backstage/errors';

/** The server's message for a failed call, else the error's own message. */
export function errorMessage(error: unknown): string {
  if (error instanceof ResponseError) {
    return error.body?.error?.message || error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The HTTP status of a failed call; undefined when it never reached the server. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ResponseError ? error.statusCode : undefined;
}
