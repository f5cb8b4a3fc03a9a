/*
 * The usage routes (docs/contracts/mcp-access.md §7.3), entries of `brokerOperations`:
 *   GET /usage/my?days=&server=                        the caller's own usage and live grants
 *   GET /usage/servers?days=                           each server's totals the caller may read
 *   GET /usage/servers/:server?days=&limit=&continue=  one server per day and tool, its people
 * The table's query schemas say the rest: `days` is a whole number 1–400 (default 30), the UTC
 * days ending today, inclusive; `limit` 1–1000 (default 100); any other query parameter, or a
 * malformed one, is a 400 naming it. Parse → call → respond: who may ask what is
 * AuthorizedUsageService's, the answers DefaultUsageService's. Backstage's barrier
 * authenticates these paths (401 without a token).
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type express from 'express';
import Router from 'express-promise-router';
import type { UsageService } from '../usage/UsageService';
import { bindBrokerOperation } from './bindBrokerOperation';

/** Dependencies of {@link createUsageRouter}. */
export interface UsageRouterOptions {
  httpAuth: HttpAuthService;
  usage: UsageService;
}

/** Builds the router of the usage routes; see the file comment. */
export function createUsageRouter(options: UsageRouterOptions): express.Router {
  const { httpAuth, usage } = options;
  const router = Router();
  const credentials = (req: express.Request) =>
    httpAuth.credentials(req, { allow: ['user', 'service'] });

  bindBrokerOperation(router, 'getMyUsage', async ({ req, query }) =>
    usage.myUsage(await credentials(req), query),
  );
  bindBrokerOperation(router, 'listServerUsage', async ({ req, query }) =>
    usage.listServers(await credentials(req), query),
  );
  bindBrokerOperation(router, 'getServerUsage', async ({ req, params, query }) =>
    usage.serverUsage(await credentials(req), params.server, query),
  );
  return router;
}
