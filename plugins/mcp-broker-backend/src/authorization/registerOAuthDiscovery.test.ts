/*
 * The discovery documents on Backstage's real root HTTP router (DefaultRootHttpRouter, which
 * refuses overlapping paths), with a stand-in for the auth plugin: a loopback HTTP server serving
 * an OpenID configuration (the real auth plugin is in packages/backend/src/e2e/brokerOAuth.test.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DiscoveryService } from '@backstage/backend-plugin-api';
import { DefaultRootHttpRouter } from '@backstage/backend-defaults/rootHttpRouter';
import { mockServices } from '@backstage/backend-test-utils';
import express from 'express';
import request from 'supertest';
import { registerOAuthDiscovery } from './registerOAuthDiscovery';

const EXTERNAL = 'https://portal.example.com';
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/api/mcp-broker/mcp';
const LOCAL_METADATA_URL = `${EXTERNAL}/api/mcp-broker/.well-known/oauth-protected-resource/mcp`;

/** The auth plugin's OpenID configuration as the stand-in serves it. */
const OPENID_CONFIGURATION = {
  issuer: `${EXTERNAL}/api/auth`,
  authorization_endpoint: `${EXTERNAL}/api/auth/v1/authorize`,
  token_endpoint: `${EXTERNAL}/api/auth/v1/token`,
  response_types_supported: ['code'],
  scopes_supported: ['openid', 'offline_access'],
  code_challenge_methods_supported: ['S256', 'plain'],
};

describe('registerOAuthDiscovery (real root router, a stand-in auth plugin on loopback)', () => {
  let authServer: http.Server;
  let authAnswers: 'configuration' | 'error' = 'configuration';
  let discovery: DiscoveryService;

  beforeAll(async () => {
    authServer = http.createServer((req, res) => {
      if (authAnswers === 'error' || req.url !== '/api/auth/.well-known/openid-configuration') {
        res.writeHead(500).end('{}');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(OPENID_CONFIGURATION));
    });
    await new Promise<void>(resolve => authServer.listen(0, '127.0.0.1', () => resolve()));
    const internal = `http://127.0.0.1:${(authServer.address() as AddressInfo).port}`;
    discovery = {
      getBaseUrl: async pluginId => `${internal}/api/${pluginId}`,
      getExternalBaseUrl: async pluginId => `${EXTERNAL}/api/${pluginId}`,
    };
  });
  afterAll(async () => {
    await new Promise(resolve => authServer.close(resolve));
  });
  beforeEach(() => {
    authAnswers = 'configuration';
  });

  async function setUp(options: { config?: object; takenByAnotherPlugin?: string[] } = {}) {
    const rootHttpRouter = DefaultRootHttpRouter.create();
    for (const path of options.takenByAnotherPlugin ?? []) {
      rootHttpRouter.use(path, (_req, res) => {
        res.json({ servedBy: 'another plugin' });
      });
    }
    const logger = mockServices.logger.mock();
    const oauth = await registerOAuthDiscovery({
      config: mockServices.rootConfig({ data: options.config ?? {} }),
      discovery,
      rootHttpRouter,
      logger,
    });
    const app = express();
    app.use('/api/mcp-broker', oauth.pluginRouter);
    app.use(rootHttpRouter.handler());
    return { app, oauth, logger, rootHttpRouter };
  }

  it('serves the metadata at the origin root and names that URL for the challenge', async () => {
    const { app, oauth } = await setUp();
    expect(oauth.resourceMetadataUrl).toBe(`${EXTERNAL}${RESOURCE_METADATA_PATH}`);
    const metadata = await request(app).get(RESOURCE_METADATA_PATH);
    expect(metadata.status).toBe(200);
    expect(metadata.headers['access-control-allow-origin']).toBe('*');
    expect(metadata.body).toEqual({
      resource: `${EXTERNAL}/api/mcp-broker/mcp`,
      authorization_servers: [`${EXTERNAL}/api/auth`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'offline_access'],
      resource_name: 'Backstage MCP broker',
    });
    for (const path of [
      '/.well-known/oauth-authorization-server/api/auth',
      '/.well-known/openid-configuration/api/auth',
    ]) {
      const document = await request(app).get(path);
      expect(document.status).toBe(200);
      expect(document.body).toEqual(OPENID_CONFIGURATION);
    }
    // Exact paths only: nothing below them, and no other method.
    expect((await request(app).get(`${RESOURCE_METADATA_PATH}/more`)).status).toBe(404);
    expect((await request(app).post(RESOURCE_METADATA_PATH)).status).toBe(404);
    const local = await request(app).get(
      '/api/mcp-broker/.well-known/oauth-protected-resource/mcp',
    );
    expect(local.body).toEqual(metadata.body);
  });

  it("serves each curated endpoint's own metadata, root and plugin-local, for any well-formed name", async () => {
    const { app, oauth } = await setUp();
    const path = '/.well-known/oauth-protected-resource/api/mcp-broker/endpoints/triage/mcp';
    expect(oauth.resourceMetadataUrlOf('triage')).toBe(`${EXTERNAL}${path}`);
    expect(oauth.resourceMetadataUrlOf(undefined)).toBe(oauth.resourceMetadataUrl);
    const metadata = await request(app).get(path);
    expect(metadata.status).toBe(200);
    expect(metadata.headers['access-control-allow-origin']).toBe('*');
    expect(metadata.body).toEqual({
      resource: `${EXTERNAL}/api/mcp-broker/endpoints/triage/mcp`,
      authorization_servers: [`${EXTERNAL}/api/auth`],
      bearer_methods_supported: ['header'],
      scopes_supported: ['openid', 'offline_access'],
      resource_name: 'Backstage MCP broker',
    });
    const local = await request(app).get(
      '/api/mcp-broker/.well-known/oauth-protected-resource/endpoints/triage/mcp',
    );
    expect(local.body).toEqual(metadata.body);
    // A name no endpoint could have is 404; nothing below an endpoint's document is served.
    const badName = await request(app).get(
      '/.well-known/oauth-protected-resource/api/mcp-broker/endpoints/Not_A_Name/mcp',
    );
    expect(badName.status).toBe(404);
    expect(badName.body).toEqual({ error: 'not_found', error_description: 'No such MCP endpoint' });
    expect((await request(app).get(`${path}/more`)).status).toBe(404);
  });

  it('leaves a root path another plugin holds to it, warns, and names its own metadata URL', async () => {
    // What Backstage's mcp-actions plugin registers when its OAuth is on.
    const { app, oauth, logger } = await setUp({
      takenByAnotherPlugin: [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-authorization-server',
      ],
    });
    expect(oauth.resourceMetadataUrl).toBe(LOCAL_METADATA_URL);
    expect(oauth.resourceMetadataUrlOf('triage')).toBe(
      `${EXTERNAL}/api/mcp-broker/.well-known/oauth-protected-resource/endpoints/triage/mcp`,
    );
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining(`not serving ${RESOURCE_METADATA_PATH} at the origin root`),
    );
    expect((await request(app).get(RESOURCE_METADATA_PATH)).body).toEqual({
      servedBy: 'another plugin',
    });
    // The path that does not clash is still served.
    const oidc = await request(app).get('/.well-known/openid-configuration/api/auth');
    expect(oidc.body).toEqual(OPENID_CONFIGURATION);
    const local = await request(app).get(
      '/api/mcp-broker/.well-known/oauth-protected-resource/mcp',
    );
    expect(local.body).toMatchObject({ resource: `${EXTERNAL}/api/mcp-broker/mcp` });
  });

  it('takes no root path with rootWellKnownRoutes: false, so another plugin can register later', async () => {
    const { oauth, rootHttpRouter } = await setUp({
      config: { mcpBroker: { authorization: { rootWellKnownRoutes: false } } },
    });
    expect(oauth.resourceMetadataUrl).toBe(LOCAL_METADATA_URL);
    expect(oauth.resourceMetadataUrlOf('triage')).toBe(
      `${EXTERNAL}/api/mcp-broker/.well-known/oauth-protected-resource/endpoints/triage/mcp`,
    );
    expect(() =>
      rootHttpRouter.use('/.well-known/oauth-protected-resource', (_req, res) => {
        res.end();
      }),
    ).not.toThrow();
  });

  it('answers 502 with an OAuth error when the auth plugin cannot be asked, and still serves the resource metadata', async () => {
    const { app, logger } = await setUp();
    authAnswers = 'error';
    const document = await request(app).get('/.well-known/oauth-authorization-server/api/auth');
    expect(document.status).toBe(502);
    expect(document.body).toEqual({
      error: 'temporarily_unavailable',
      error_description: "Backstage's auth backend did not answer; try again shortly",
    });
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('HTTP 500'));
    const metadata = await request(app).get(RESOURCE_METADATA_PATH);
    expect(metadata.status).toBe(200);
    expect(metadata.body.scopes_supported).toBeUndefined();
    expect(metadata.body.authorization_servers).toEqual([`${EXTERNAL}/api/auth`]);
  });

  it('says at start-up when Backstage lets no MCP client register', async () => {
    const off = await setUp();
    expect(off.logger.info).toHaveBeenCalledWith(
      expect.stringContaining('MCP clients cannot sign in through Backstage on their own'),
    );
    const on = await setUp({ config: { auth: { clientIdMetadataDocuments: { enabled: true } } } });
    expect(on.logger.info).not.toHaveBeenCalled();
  });
});
