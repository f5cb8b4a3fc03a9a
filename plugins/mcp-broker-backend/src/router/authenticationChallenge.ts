/*
 * The broker's 401 on /mcp, in both protocol eras: a JSON-RPC error body that says what to send,
 * and the `WWW-Authenticate: Bearer` challenge from which an MCP client starts its sign-in through
 * Backstage (RFC 9728 `resource_metadata`; `error="invalid_token"` when a bearer token was sent
 * and refused: expired, revoked with its signing key, forged or unknown). A token is only ever
 * read from the Authorization header; one in the query string is named in the message, never used.
 */
import type { Request, Response } from 'express';
import { bearerChallenge } from '../authorization/protectedResource';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { ResponseWriter } from './ResponseWriter';

const BEARER_TOKEN = /^bearer +\S/i;

/**
 * Answers an unauthenticated request to an MCP endpoint with 401 and the OAuth challenge naming
 * `resourceMetadataUrl` (a function of the request where endpoints have metadata of their own).
 */
export function challengeUnauthenticated(
  resourceMetadataUrlOf: string | ((req: Request) => string),
) {
  return (req: Request, res: Response): void => {
    const resourceMetadataUrl =
      typeof resourceMetadataUrlOf === 'string'
        ? resourceMetadataUrlOf
        : resourceMetadataUrlOf(req);
    const authorization = req.headers.authorization;
    const tokenSent = typeof authorization === 'string' && BEARER_TOKEN.test(authorization);
    res.setHeader(
      'WWW-Authenticate',
      bearerChallenge(
        tokenSent
          ? {
              resourceMetadataUrl,
              error: 'invalid_token',
              errorDescription: 'The access token is invalid or has expired',
            }
          : { resourceMetadataUrl },
      ),
    );
    let message = tokenSent
      ? 'Unauthorized: the bearer token is invalid or has expired; sign in again'
      : 'Unauthorized: send a Backstage token as "Authorization: Bearer <token>", or let your ' +
        'MCP client sign you in (the WWW-Authenticate header says where)';
    if (req.query.access_token !== undefined) {
      message += '; a token in the URL (access_token) is never accepted';
    }
    new ResponseWriter(res).refuse(401, JsonRpcErrorCode.Unauthorized, message);
  };
}
