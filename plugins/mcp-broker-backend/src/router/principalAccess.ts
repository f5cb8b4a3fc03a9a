/*
 * The router's one way to learn what the request's principal may do (BrokerAccessControl,
 * decided per credential — principal and token — and catalog version). Credentials are re-read from the request only
 * when a decision must be taken. When the permission backend cannot be asked the answer is a
 * 503 the client may retry (fail closed), with the cause in the log only.
 */
import { createHash } from 'node:crypto';
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import { mcpBrokerSessionCreatePermission } from '@devportal/plugin-mcp-broker-common';
import { ServiceUnavailableError } from '@backstage/errors';
import type { Request, Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import type { BrokerAccessControl, PrincipalAccess } from '../permissions/BrokerAccessControl';
import { JsonRpcErrorCode, type JsonRpcId } from '../protocol/jsonRpc';
import { headerValue, sendTransportError } from './protocol';
import { principalOf } from './requirePrincipal';

/** What {@link accessOf} needs. */
export interface PrincipalAccessDeps {
  broker: McpBroker;
  access: BrokerAccessControl;
  httpAuth: HttpAuthService;
}

/**
 * The credential a permission decision is for: the principal and a digest of the request's
 * `Authorization` header. Two tokens of one subject may be restricted differently (static
 * tokens' `accessRestrictions`), so they never share a decision; the digest keeps no usable token.
 */
export function credentialKeyOf(req: Request, principal: string): string {
  const digest = createHash('sha256')
    .update(headerValue(req, 'authorization') ?? '')
    .digest('base64url');
  return `${principal} ${digest}`;
}

/** What the request's principal may do; throws ServiceUnavailableError (503) when unknown. */
export async function accessOf(
  deps: PrincipalAccessDeps,
  req: Request,
  res: Response,
): Promise<PrincipalAccess> {
  try {
    return await deps.access.forCredential(
      credentialKeyOf(req, principalOf(res)),
      deps.broker.catalog(),
      () => deps.httpAuth.credentials(req, { allow: ['user', 'service'] }),
    );
  } catch (error) {
    deps.broker.logger.warn(`MCP broker: could not take a permission decision: ${error}`);
    throw new ServiceUnavailableError(
      'The MCP broker cannot reach the permission backend right now; retry shortly',
    );
  }
}

/** The principal's access, or undefined after answering 503 (permission backend unreachable). */
export async function requestAccess(
  deps: PrincipalAccessDeps,
  req: Request,
  res: Response,
  id: JsonRpcId,
): Promise<PrincipalAccess | undefined> {
  try {
    return await accessOf(deps, req, res);
  } catch (error) {
    sendTransportError(res, 503, JsonRpcErrorCode.InternalError, (error as Error).message, id);
    return undefined;
  }
}

/**
 * The 403 for a principal without `mcp-broker.session.create` (spec §8): it guards `initialize`
 * and every stateless request; the message names the permission and what it was needed for.
 */
export function sendSessionCreateDenied(res: Response, needing: string, id: JsonRpcId): void {
  sendTransportError(
    res,
    403,
    JsonRpcErrorCode.InvalidRequest,
    `Forbidden: ${needing} needs the permission ` +
      `${mcpBrokerSessionCreatePermission.name}; ask an admin to grant it`,
    id,
  );
}
