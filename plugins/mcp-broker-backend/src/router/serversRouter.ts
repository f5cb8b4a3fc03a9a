/*
 * The broker's server descriptions for the catalog (contract mcp-access §2.6), entries of
 * `brokerOperations`:
 *   GET /servers               every server, in config order: {items: McpServerDescription[]}
 *   GET /servers/:kind/:name   one server (`kind` is `server`; `endpoint` once endpoints exist)
 * Both need `mcp-broker.server.read` (403 naming it otherwise). Service principals pass it
 * unless their token's access restrictions say otherwise (Backstage's rule), so the catalog
 * module reads with its own service token. Backstage's barrier authenticates these paths (401
 * without a token). The answer is what this replica holds; replicas converge (B§6).
 */
import type { HttpAuthService, PermissionsService } from '@backstage/backend-plugin-api';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { mcpBrokerServerReadPermission } from '@devportal/plugin-mcp-broker-common';
import type express from 'express';
import Router from 'express-promise-router';
import type { McpBroker } from '../broker/McpBroker';
import { describeServer, describeServers } from '../broker/serverDescriptions';
import { bindBrokerOperation } from './bindBrokerOperation';

/** Dependencies of {@link createServersRouter}. */
export interface ServersRouterOptions {
  broker: McpBroker;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
}

/** Builds the router of `/servers` and `/servers/:kind/:name`. */
export function createServersRouter(options: ServersRouterOptions): express.Router {
  const router = Router();
  const requireServerRead = async (req: express.Request) => {
    const credentials = await options.httpAuth.credentials(req, { allow: ['user', 'service'] });
    const [decision] = await options.permissions.authorize(
      [{ permission: mcpBrokerServerReadPermission }],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `Reading the MCP broker's server descriptions needs the permission ${mcpBrokerServerReadPermission.name}`,
      );
    }
  };

  bindBrokerOperation(router, 'listServers', async ({ req }) => {
    await requireServerRead(req);
    return { items: describeServers(options.broker) };
  });
  bindBrokerOperation(router, 'getServer', async ({ req, params: { kind, name } }) => {
    await requireServerRead(req);
    // Curated endpoints do not exist yet: every endpoint name is unknown.
    const description = kind === 'server' ? describeServer(options.broker, name) : undefined;
    if (description === undefined) {
      throw new NotFoundError(`The MCP broker has no ${kind} named "${name.slice(0, 100)}"`);
    }
    return description;
  });
  return router;
}
