/*
 * The broker authenticates /mcp and /status itself instead of through Backstage's default
 * credentials barrier (plugin.ts declares those paths 'unauthenticated' to the barrier): the
 * barrier verifies the token's signature on every request, before the router could use the
 * VerifiedPrincipalCache. Authentication runs first on those paths (the MCP endpoint's first
 * step, this middleware elsewhere), so the order of answers is unchanged: 401/403 before 403
 * (Host/Origin), 400, 404 or 405.
 */
import { isError } from '@backstage/errors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { VerifiedPrincipalCache } from './VerifiedPrincipalCache';

const PRINCIPAL = 'mcpBrokerPrincipal';

/** Paths the router authenticates itself; everything else stays behind Backstage's barrier. */
export const SELF_AUTHENTICATED_PATHS = ['/mcp', '/endpoints', '/status', '/catalog'] as const;

/**
 * Authenticates the request and keeps its principal for {@link principalOf}; false when it was
 * answered. A 401 is answered by `onUnauthenticated` when given (the MCP endpoint's OAuth
 * challenge); other failures (and a 401 without it) are thrown, for Backstage's error handler.
 */
export async function authenticateRequest(
  principals: VerifiedPrincipalCache,
  req: Request,
  res: Response,
  onUnauthenticated?: (req: Request, res: Response) => void,
): Promise<boolean> {
  let principal: string;
  try {
    principal = await principals.principalOf(req);
  } catch (error) {
    if (onUnauthenticated === undefined || !isError(error)) throw error;
    if (error.name !== 'AuthenticationError') throw error;
    onUnauthenticated(req, res);
    return false;
  }
  res.locals[PRINCIPAL] = principal;
  return true;
}

/** Middleware: {@link authenticateRequest}, then the next handler. */
export function requirePrincipal(
  principals: VerifiedPrincipalCache,
  onUnauthenticated?: (req: Request, res: Response) => void,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (await authenticateRequest(principals, req, res, onUnauthenticated)) next();
  };
}

/** The principal {@link requirePrincipal} stored for this request. */
export function principalOf(res: Response): string {
  const principal: unknown = res.locals[PRINCIPAL];
  // Reaching a handler without it would be a wiring mistake in createRouter, never a client's.
  if (typeof principal !== 'string')
    throw new Error('MCP broker: requirePrincipal did not run for this route');
  return principal;
}
