/*
 * The broker's one body reader, in front of every authenticated route (issue #20): the body
 * is UTF-8 text (any other declared charset 415, invalid bytes 400), at most
 * `maxRequestBodyBytes` (413 at once on a declared Content-Length over it, or as soon as a
 * chunked body passes it), and fully arrived within `requestBodyTimeout` (408). Refusals are
 * HTTP errors with a JSON-RPC error body, as MCP clients expect on the transport level; the
 * connection is then closed. The text is left in `req.body` for the POST handler to parse.
 */
import { readUtf8RequestBody, RequestBodyError } from '@devportal/backend-request-body';
import type { Request, RequestHandler, Response } from 'express';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { ResponseWriter } from './ResponseWriter';

/** Limits of {@link readRequestBody}. */
export interface RequestBodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

/**
 * Reads the request body within `limits` into `req.body` (a string, or undefined); false when it
 * was refused (answered).
 */
export async function readBody(
  req: Request,
  res: Response,
  limits: RequestBodyLimits,
): Promise<boolean> {
  let text: string | undefined;
  try {
    text = await readUtf8RequestBody(req, res, limits);
  } catch (error) {
    if (!(error instanceof RequestBodyError)) throw error;
    // -32700 for bytes that are not text; the other refusals are about the request itself.
    const code =
      error.failure === 'invalid-utf8'
        ? JsonRpcErrorCode.ParseError
        : JsonRpcErrorCode.InvalidRequest;
    new ResponseWriter(res).refuse(error.status, code, error.message);
    return false;
  }
  req.body = text;
  return true;
}

/** Middleware: {@link readBody}, then the next handler. */
export function readRequestBody(limits: RequestBodyLimits): RequestHandler {
  return async (req, res, next) => {
    if (await readBody(req, res, limits)) next();
  };
}
