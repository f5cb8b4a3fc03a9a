/*
 * The broker's HTTP surface under /api/mcp-broker:
 *   POST/GET/DELETE /mcp  the aggregated MCP server (streamable HTTP)
 *   POST/GET/DELETE /endpoints/<name>/mcp  a curated endpoint: the same server, narrowed (§13)
 *   GET /status          backend states, clashes and client counts (mcp-broker.status.read)
 *   GET /catalog         what the caller may use, grouped by server (mcp-broker.session.create)
 *   GET /health          liveness (unauthenticated)
 * (The last three are entries of `brokerOperations`, bound by bindBrokerOperation.)
 * (The OAuth discovery documents are served by authorization/registerOAuthDiscovery.ts.)
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type express from 'express';
import type { Request } from 'express';
import Router from 'express-promise-router';
import { VerifiedPrincipalCache } from './VerifiedPrincipalCache';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import type { BrokerAccessControl } from '../permissions/BrokerAccessControl';
import type { BrokerTelemetry } from '../telemetry/BrokerTelemetry';
import { bindBrokerOperation } from './bindBrokerOperation';
import { catalogHandler } from './catalogHandler';
import { statusHandler, type StatusHandlerDeps } from './statusHandler';
import type { CredentialStep } from './credentialStep';
import type { AdmissionStep } from './admission';
import { mcpEndpoint } from './mcpEndpoint';
import { readRequestBody } from './requestBody';
import { requirePrincipal, SELF_AUTHENTICATED_PATHS } from './requirePrincipal';
import { challengeUnauthenticated } from './authenticationChallenge';
import type { CuratedEndpointStatus } from '../endpoints/CuratedEndpoint';
import type { CuratedEndpoints } from '../endpoints/CuratedEndpoints';
import { isValidEndpointName } from '../endpoints/endpointConfig';

/** A path under a curated endpoint (the router's mount path before it). */
const ENDPOINT_PATH = /\/endpoints\/([^/]+)(?:\/|$)/;

/** Dependencies of {@link createRouter}. */
export interface RouterOptions {
  broker: McpBroker;
  httpAuth: HttpAuthService;
  /** Permission decisions per principal (spec §8). */
  access: BrokerAccessControl;
  toolCallAuditor: ToolCallAuditor;
  /** Where the endpoint's protected resource metadata is: named in every 401 of /mcp. */
  resourceMetadataUrl: string;
  /**
   * Where a curated endpoint's own metadata is, named in the 401s of its path (contract §4);
   * without it they name {@link RouterOptions.resourceMetadataUrl}.
   */
  resourceMetadataUrlOf?: (endpoint: string) => string;
  /** Metrics and traces of client requests (spec §12). */
  telemetry: BrokerTelemetry;
  /**
   * Steps of the admission chain's `limits` stage, after access (e.g. a per-person rate limit
   * or a per-server credential step); none by default.
   */
  limits?: readonly AdmissionStep[];
  /** `mcpBroker.rateLimits.methods`, checked against the method table (start-up fails on a typo). */
  rateLimitedMethods?: readonly string[];
  /** Each server's identity settings on `/status` (spec §11). */
  identityStatusOf?: StatusHandlerDeps['identityStatusOf'];
  /** Kubernetes registrations that serve nothing, and why, on `/status` (spec §11.1). */
  refusedRegistrations?: StatusHandlerDeps['refusedRegistrations'];
  /** The access grants on `/status` (mcp-access §6.7). */
  accessGrants?: StatusHandlerDeps['accessGrants'];
  /** The credential step of a person's requests (spec §11). */
  credentialStep?: CredentialStep;
  /** The curated endpoints (spec §13); none by default. */
  endpoints?: CuratedEndpoints;
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
    telemetry: options.telemetry,
    limits: options.limits,
    rateLimitedMethods: options.rateLimitedMethods,
    credentialStep: options.credentialStep,
    endpoints: options.endpoints,
  };

  bindBrokerOperation(router, 'getHealth', async () => ({ status: 'ok' as const }));
  // /mcp is one handler: its edge authenticates first (401 with the OAuth challenge MCP clients
  // sign in from, spec §10), then reads the body and checks Host/Origin (see mcpEndpoint).
  const principals = VerifiedPrincipalCache.create({ httpAuth: options.httpAuth });
  const onUnauthenticated = challengeUnauthenticated(req => {
    const endpoint = endpointOfPath(req);
    return endpoint === undefined || options.resourceMetadataUrlOf === undefined
      ? options.resourceMetadataUrl
      : options.resourceMetadataUrlOf(endpoint);
  });
  const { maxRequestBodyBytes, requestBodyTimeoutMs, dnsRebindingProtection } =
    options.broker.config;
  const bodyLimits = { maxBytes: maxRequestBodyBytes, timeoutMs: requestBodyTimeoutMs };
  // One handler for the main endpoint and every curated one (its path names the endpoint).
  const endpoint = mcpEndpoint(deps, {
    principals,
    onUnauthenticated,
    bodyLimits,
    dnsRebindingProtection,
  });
  router.all(['/mcp', '/endpoints/:endpoint/mcp'], endpoint);
  // Everything else on these paths (sub-paths of /mcp included) is authenticated first, so every
  // method and every mistake is 401 without a token; bodies are read within the same limits.
  router.use(['/mcp', '/endpoints'], requirePrincipal(principals, onUnauthenticated));
  router.use(['/status', '/catalog'], requirePrincipal(principals));
  router.use([...SELF_AUTHENTICATED_PATHS], readRequestBody(bodyLimits));
  bindBrokerOperation(
    router,
    'getStatus',
    statusHandler({
      ...deps,
      identityStatusOf: options.identityStatusOf,
      refusedRegistrations: options.refusedRegistrations,
      accessGrants: options.accessGrants,
      endpoints: () => endpointStatuses(options.broker, options.endpoints),
    }),
  );
  bindBrokerOperation(router, 'getCatalog', catalogHandler(deps));
  return router;
}

/**
 * The curated endpoint a request's path names (`/endpoints/<name>/…`; a well-formed name, known or
 * not, so a 401 says nothing of which endpoints exist), or undefined.
 */
function endpointOfPath(req: Request): string | undefined {
  const name: string | undefined =
    req.params.endpoint ?? ENDPOINT_PATH.exec(`${req.baseUrl}${req.path}`)?.[1];
  return name !== undefined && isValidEndpointName(name) ? name : undefined;
}

/** Each curated endpoint's `/status` entry, against the broker's current servers and catalog. */
function endpointStatuses(
  broker: McpBroker,
  endpoints: CuratedEndpoints | undefined,
): CuratedEndpointStatus[] {
  if (endpoints === undefined) return [];
  const servers = new Set(broker.serverList().map(server => server.name));
  const catalog = broker.catalog();
  return endpoints
    .list()
    .map(e => e.status(servers, catalog, broker.sessions.idsOfEndpoint(e.name).length));
}
