/* GET /status: what an operator needs to see whether each backend is reachable and current. */
import { NotAllowedError } from '@backstage/errors';
import { mcpBrokerStatusReadPermission } from '@devportal/plugin-mcp-broker-common';
import type { Request, Response } from 'express';
import { accessOf, PrincipalAccessDeps } from './principalAccess';

/**
 * Answers the broker status to principals with `mcp-broker.status.read` (403 otherwise; the
 * router's requirePrincipal has authenticated the request: user or service).
 */
export function statusHandler(deps: PrincipalAccessDeps) {
  return async (req: Request, res: Response) => {
    const access = await accessOf(deps, req, res);
    if (!access.mayReadStatus) {
      throw new NotAllowedError(
        `Reading the MCP broker status needs the permission ${mcpBrokerStatusReadPermission.name}`,
      );
    }
    const permissions = { authorizeCalls: deps.access.authorizeCalls };
    res.json({ ...deps.broker.status(), permissions });
  };
}
