/*
 * The OAuth discovery documents stock MCP clients look for (MCP authorization, spec §10):
 * - Protected Resource Metadata of /api/mcp-broker/mcp at the path-suffixed well-known URL at the
 *   origin root: the URL the broker's 401 challenge names, and the first one the official SDKs
 *   (1.x and 2.x) and VS Code derive on their own. The same document is also served under the
 *   plugin (/api/mcp-broker/.well-known/oauth-protected-resource/mcp), which the challenge names
 *   instead when the root route cannot be had.
 * - The same for each curated endpoint (spec §13, contract §4):
 *   /.well-known/oauth-protected-resource/api/mcp-broker/endpoints/<name>/mcp (and under the
 *   plugin, .../oauth-protected-resource/endpoints/<name>/mcp), whose `resource` is the endpoint's
 *   URL. It is answered for every well-formed name, known or not, so this public document is no
 *   oracle of which endpoints exist (the endpoint itself answers 404 after sign-in); reloaded
 *   endpoints need nothing here.
 * - For Backstage's issuer, which has a path (/api/auth): the RFC 8414 and OpenID Connect
 *   path-inserted documents at the origin root, carrying Backstage's own configuration unchanged.
 *   Backstage serves only the path-appended one (/api/auth/.well-known/openid-configuration),
 *   which clients try last and RFC 8414-only clients never.
 * Root routes go through Backstage's root HTTP router, which refuses a path that is a prefix of
 * another one (or has one as prefix). Backstage's mcp-actions plugin, with its OAuth on, takes
 * /.well-known/oauth-protected-resource and /.well-known/oauth-authorization-server: a route that
 * clashes is skipped with a warning, and `mcpBroker.authorization.rootWellKnownRoutes: false`
 * leaves the origin root to such a plugin when the broker starts first (it would make that
 * plugin's start fail). The documents are public metadata: no authentication, any origin.
 */
import type {
  DiscoveryService,
  LoggerService,
  RootHttpRouterService,
} from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';
import type express from 'express';
import Router from 'express-promise-router';
import {
  AuthorizationServerUnavailableError,
  BackstageAuthorizationServer,
} from './BackstageAuthorizationServer';
import {
  AUTHORIZATION_SERVER_SUFFIX,
  OPENID_CONFIGURATION_SUFFIX,
  PROTECTED_RESOURCE_SUFFIX,
  ProtectedResource,
  pathInsertedWellKnownUrl,
  protectedResourceMetadata,
} from './protectedResource';
import { isValidEndpointName } from '../endpoints/endpointConfig';

/** The plugin-local path of the endpoint's protected resource metadata (under /api/mcp-broker). */
export const PLUGIN_RESOURCE_METADATA_PATH = `/.well-known/${PROTECTED_RESOURCE_SUFFIX}/mcp`;
/** The plugin-local folder of the curated endpoints' metadata (`<this>/<name>/mcp`). */
export const PLUGIN_ENDPOINT_METADATA_PATH = `/.well-known/${PROTECTED_RESOURCE_SUFFIX}/endpoints`;

/** The route of one endpoint's metadata below the endpoints' metadata folder. */
const ENDPOINT_METADATA_ROUTE = '/:endpoint/mcp';

/** Options of {@link registerOAuthDiscovery}. */
export interface OAuthDiscoveryOptions {
  config: Config;
  discovery: DiscoveryService;
  rootHttpRouter: RootHttpRouterService;
  logger: LoggerService;
  /** Default: Backstage's auth backend found through `discovery`. */
  authorizationServer?: BackstageAuthorizationServer;
}

/** What the broker's router needs from the discovery set-up. */
export interface OAuthDiscovery {
  /** The endpoint as a protected resource. */
  protectedResource: ProtectedResource;
  /** The metadata URL the 401 challenge names (the root one when it could be registered). */
  resourceMetadataUrl: string;
  /**
   * The metadata URL a 401 of `/endpoints/<name>/mcp` names (root or plugin-local, as for the
   * main endpoint); the main endpoint's for `undefined`.
   */
  resourceMetadataUrlOf(endpoint: string | undefined): string;
  /** The plugin-local metadata route ({@link PLUGIN_RESOURCE_METADATA_PATH}); unauthenticated. */
  pluginRouter: express.Router;
}

/** Answers with a JSON document any origin may read. */
function publicJson(res: express.Response, body: unknown, status = 200) {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.status(status).json(body);
}

/**
 * Serves the discovery documents (root routes where they can be had, and the plugin-local one)
 * and returns the metadata URL for the challenge.
 */
export async function registerOAuthDiscovery(
  options: OAuthDiscoveryOptions,
): Promise<OAuthDiscovery> {
  const { config, discovery, rootHttpRouter, logger } = options;
  const authorizationServer =
    options.authorizationServer ?? BackstageAuthorizationServer.create({ discovery });
  const pluginUrl = await discovery.getExternalBaseUrl('mcp-broker');
  const protectedResource: ProtectedResource = {
    resource: `${pluginUrl}/mcp`,
    authorizationServer: await discovery.getExternalBaseUrl('auth'),
  };

  const serveMetadata = async (res: express.Response, resource: ProtectedResource) => {
    // Backstage's scopes (openid, offline_access with refresh tokens on): a client that asks for
    // them gets a refresh token, so an IDE session outlives its one-hour access token.
    const scopes = await authorizationServer.scopesSupported();
    res.setHeader('Cache-Control', 'public, max-age=300');
    publicJson(res, protectedResourceMetadata(resource, scopes));
  };
  const resourceMetadata = async (_req: express.Request, res: express.Response) =>
    serveMetadata(res, protectedResource);
  const endpointMetadata = async (req: express.Request, res: express.Response) => {
    const name = req.params.endpoint;
    if (!isValidEndpointName(name)) {
      publicJson(res, { error: 'not_found', error_description: 'No such MCP endpoint' }, 404);
      return;
    }
    await serveMetadata(res, { ...protectedResource, resource: endpointResource(pluginUrl, name) });
  };
  const authorizationServerMetadata = async (_req: express.Request, res: express.Response) => {
    try {
      publicJson(res, await authorizationServer.configuration());
    } catch (error) {
      if (!(error instanceof AuthorizationServerUnavailableError)) throw error;
      logger.warn(`MCP broker: ${error.message}`);
      publicJson(
        res,
        {
          error: 'temporarily_unavailable',
          error_description: "Backstage's auth backend did not answer; try again shortly",
        },
        502,
      );
    }
  };
  const documentRouter = (handler: express.RequestHandler) => {
    const router = Router();
    router.get('/', handler);
    return router;
  };

  let resourceMetadataUrl = `${pluginUrl}${PLUGIN_RESOURCE_METADATA_PATH}`;
  let endpointMetadataBase = `${pluginUrl}${PLUGIN_ENDPOINT_METADATA_PATH}`;
  if (config.getOptionalBoolean('mcpBroker.authorization.rootWellKnownRoutes') ?? true) {
    const endpointsRoot = pathInsertedWellKnownUrl(
      `${pluginUrl}/endpoints`,
      PROTECTED_RESOURCE_SUFFIX,
    );
    const endpointsRouter = Router();
    endpointsRouter.get(ENDPOINT_METADATA_ROUTE, endpointMetadata);
    try {
      rootHttpRouter.use(endpointsRoot.pathname, endpointsRouter);
      endpointMetadataBase = endpointsRoot.toString();
    } catch (error) {
      logger.warn(
        `MCP broker: not serving ${endpointsRoot.pathname} at the origin root: ${
          (error as Error).message
        } (curated endpoints' 401 challenges name the metadata under the plugin instead)`,
      );
    }
    const routes = [
      {
        url: pathInsertedWellKnownUrl(protectedResource.resource, PROTECTED_RESOURCE_SUFFIX),
        handler: resourceMetadata,
      },
      ...[AUTHORIZATION_SERVER_SUFFIX, OPENID_CONFIGURATION_SUFFIX].map(suffix => ({
        url: pathInsertedWellKnownUrl(protectedResource.authorizationServer, suffix),
        handler: authorizationServerMetadata,
      })),
    ];
    for (const [index, route] of routes.entries()) {
      try {
        rootHttpRouter.use(route.url.pathname, documentRouter(route.handler));
        if (index === 0) resourceMetadataUrl = route.url.toString();
      } catch (error) {
        logger.warn(
          `MCP broker: not serving ${route.url.pathname} at the origin root: ${
            (error as Error).message
          } (another plugin serves OAuth discovery there; MCP clients still find the broker's ` +
            `metadata through its 401 challenge)`,
        );
      }
    }
  }

  const clientRegistration = [
    'clientIdMetadataDocuments',
    'experimentalClientIdMetadataDocuments',
    'experimentalDynamicClientRegistration',
  ].some(key => config.getOptionalBoolean(`auth.${key}.enabled`) === true);
  if (!clientRegistration) {
    logger.info(
      'MCP broker: neither auth.clientIdMetadataDocuments nor auth.experimentalDynamicClientRegistration ' +
        'is enabled here, so MCP clients cannot sign in through Backstage on their own (they need a ' +
        'token by hand); see the broker README, "Connect your MCP client"',
    );
  }

  const pluginRouter = Router();
  pluginRouter.get(PLUGIN_RESOURCE_METADATA_PATH, resourceMetadata);
  pluginRouter.get(`${PLUGIN_ENDPOINT_METADATA_PATH}${ENDPOINT_METADATA_ROUTE}`, endpointMetadata);
  return {
    protectedResource,
    resourceMetadataUrl,
    resourceMetadataUrlOf: endpoint =>
      endpoint === undefined
        ? resourceMetadataUrl
        : `${endpointMetadataBase}/${encodeURIComponent(endpoint)}/mcp`,
    pluginRouter,
  };
}

/** A curated endpoint's URL: its resource identifier. */
function endpointResource(pluginUrl: string, name: string): string {
  return `${pluginUrl}/endpoints/${name}/mcp`;
}
