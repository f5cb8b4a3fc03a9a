/*
 * The broker's HTTP surface under /api/mcp-broker:
 *   POST/GET/DELETE /mcp  the aggregated MCP server (streamable HTTP)
 *   GET /status          backend states, clashes and client counts (mcp-broker.status.read)
 *   GET /catalog         what the caller may use, grouped by server (mcp-broker.session.create)
 *   GET /health          liveness (unauthenticated)
 * (The OAuth discovery documents are served by authorization/registerOAuthDiscovery.ts.)
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type express from 'express';
import Router from 'express-promise-router';
import { VerifiedPrincipalCache } from './VerifiedPrincipalCache';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import type { BrokerAccessControl } from '../permissions/BrokerAccessControl';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { catalogHandler } from './catalogHandler';
import { statusHandler } from './statusHandler';
import { hostOriginGuard } from './hostOriginGuard';
import { deleteHandler, getHandler, postHandler } from './mcpEndpoint';
import { sendTransportError } from './protocol';
import { readRequestBody } from './requestBody';
import { requirePrincipal, SELF_AUTHENTICATED_PATHS } from './requirePrincipal';
import { challengeUnauthenticated } from './authenticationChallenge';

/** Dependencies of {@link createRouter}. */
export interface RouterOptions {
  broker: McpBroker;
  httpAuth: HttpAuthService;
  /** Permission decisions per principal (spec §8). */
  access: BrokerAccessControl;
  toolCallAuditor: ToolCallAuditor;
  /** Where the endpoint's protected resource metadata is: named in every 401 of /mcp. */
  resourceMetadataUrl: string;
}

/**
 * Builds the broker's Express router. It authenticates {@link SELF_AUTHENTICATED_PATHS} itself
 * (the plugin exempts them from Backstage's barrier), remembering verified tokens.
 */
export async function createRouter(options: RouterOptions): Promise<express.Router> {
  const router = Router();
  const deps = {
    broker: options.broker,
    httpAuth: options.httpAuth,
    access: options.access,
    toolCallAuditor: options.toolCallAuditor,
  };

  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // First on these paths (sub-paths included), so every method and every mistake is 401 without a
  // token; on /mcp with the OAuth challenge MCP clients sign in from (spec §10).
  const principals = VerifiedPrincipalCache.create({ httpAuth: options.httpAuth });
  router.use(
    '/mcp',
    requirePrincipal(principals, challengeUnauthenticated(options.resourceMetadataUrl)),
  );
  router.use(['/status', '/catalog'], requirePrincipal(principals));
  // Every body on these paths is read here, within the configured size and time limits.
  const { maxRequestBodyBytes, requestBodyTimeoutMs } = options.broker.config;
  router.use(
    [...SELF_AUTHENTICATED_PATHS],
    readRequestBody({ maxBytes: maxRequestBodyBytes, timeoutMs: requestBodyTimeoutMs }),
  );
  router.get('/status', statusHandler(deps));
  router.get('/catalog', catalogHandler(deps));

  const guard = hostOriginGuard(options.broker.config.dnsRebindingProtection);
  router.post('/mcp', guard, postHandler(deps));
  router.get('/mcp', guard, getHandler(deps));
  router.delete('/mcp', guard, deleteHandler(deps));
  router.all('/mcp', guard, (_req, res) => {
    res.setHeader('Allow', 'GET, POST, DELETE');
    sendTransportError(
      res,
      405,
      JsonRpcErrorCode.InvalidRequest,
      'Use POST, GET or DELETE on /mcp',
    );
  });
  return router;
}
