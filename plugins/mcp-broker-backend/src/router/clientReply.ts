/*
 * The router's side of ClientReply: a tool-call handler answers the client without knowing
 * Express. `answered` is what the handlers checked on the response before (headers sent, or
 * the connection destroyed), so an answer after a stream began or after the client left is
 * skipped by the handler, never thrown by Express.
 */
import type { Response } from 'express';
import type { ClientReply } from '../types';
import { requestScopeOf } from './requestScope';

/** Adapts an Express response to the {@link ClientReply} a ToolCallHandler answers through. */
export function clientReplyOf(res: Response): ClientReply {
  return {
    json(body: unknown, httpStatus?: number) {
      requestScopeOf(res)?.answered(body);
      if (httpStatus !== undefined) res.status(httpStatus);
      // Compact whatever the app's `json spaces` (pretty in development): a call's answer is
      // the same bytes as on its stream, one line (clients that read the body line by line
      // as they read an event stream get the whole message).
      res.type('application/json').send(JSON.stringify(body));
    },
    get answered() {
      return res.headersSent || res.destroyed;
    },
  };
}
