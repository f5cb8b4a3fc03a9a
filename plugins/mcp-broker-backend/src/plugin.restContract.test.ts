/*
 * The broker's REST routes are the table `brokerOperations` (mcp-broker-common), and the table
 * says what they answer (docs/contracts/mcp-access.md §6.9):
 * - every route the plugin's routers serve is an entry of the table, or one of the few non-REST
 *   routes named below with the reason, and every entry is served: read from the Express
 *   routers the real plugin hands to its http router;
 * - the real plugin's answers, read through McpBrokerClient (which builds its calls from the
 *   table), parse with the entry's response schema and lose nothing in parsing (a field the
 *   schema does not know fails the test);
 * - a bad path parameter, query parameter or body is a 400 whose message names it.
 * startTestBackend (auth mocked: a request without a token counts as a signed-in user,
 * permissions allow everything), a real example MCP server and a real SDK client.
 */
import type { AddressInfo } from 'node:net';
import {
  coreServices,
  createServiceFactory,
  type HttpRouterService,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import {
  brokerOperations,
  McpBrokerClient,
  type BrokerOperationId,
} from '@devportal/plugin-mcp-broker-common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type express from 'express';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

/** Routes that are not REST and so not in the table, with why. */
const NOT_REST: Record<string, string> = {
  'ALL /mcp': 'the MCP endpoint (its methods are the MCP method table)',
  'ALL /endpoints/:endpoint/mcp': 'a curated MCP endpoint (the MCP method table)',
  'GET /connect/:server': 'the credential page (HTML)',
  'GET /connect/page.js': "the credential page's script",
  'GET /.well-known/jwks.json': 'a standard document (JWKS)',
  'GET /.well-known/oauth-protected-resource/mcp': 'a standard document (RFC 9728)',
  'GET /.well-known/oauth-protected-resource/endpoints/:endpoint/mcp':
    'a standard document (RFC 9728)',
  'GET /.well-known/backstage/permissions/metadata': "Backstage's permission integration",
  'POST /.well-known/backstage/permissions/apply-conditions': "Backstage's permission integration",
};

const configOf = (url: string) => ({
  mcpBroker: {
    servers: [{ name: 'a', url, owner: 'group:default/payments-team' }],
    usage: { flushInterval: { seconds: 1 } },
  },
});

/** `METHOD path` of every route of `router`; throws on a router mounted under a path. */
function routesOf(router: express.Router): string[] {
  return router.stack.flatMap((layer: any) => {
    if (layer.route !== undefined) {
      const paths: string[] = [layer.route.path].flat();
      const methods = Object.keys(layer.route.methods).map(m =>
        m === '_all' ? 'ALL' : m.toUpperCase(),
      );
      return methods.flatMap(method => paths.map(path => `${method} ${path}`));
    }
    if (Array.isArray(layer.handle?.stack) && layer.handle.stack.some((l: any) => l.route)) {
      throw new Error(
        `A router with routes is mounted under a path (${layer.regexp}): bind routes at the top`,
      );
    }
    return [];
  });
}

describe('the broker REST contract (brokerOperations) on the real plugin', () => {
  let server: ExampleMcpServer;

  beforeAll(async () => {
    server = await startExampleMcpServer({ port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('serves exactly the routes of the table, besides the named non-REST ones', async () => {
    const routers: express.Router[] = [];
    const capturing: HttpRouterService = {
      use: handler => {
        routers.push(handler as express.Router);
      },
      addAuthPolicy: () => {},
    };
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({ data: configOf(server.url) }),
        createServiceFactory({
          service: coreServices.httpRouter,
          deps: {},
          factory: () => capturing,
        }),
      ],
    });
    try {
      const served = routers.flatMap(routesOf).sort();
      const table = Object.values(brokerOperations).map(
        op => `${op.method.toUpperCase()} ${op.path}`,
      );
      expect(served).toEqual([...table, ...Object.keys(NOT_REST)].sort());
    } finally {
      await backend.stop();
    }
  });

  describe('answers and errors', () => {
    let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
    let base: string;
    let client: McpBrokerClient;
    let mcp: Client;

    beforeAll(async () => {
      ({ server: http } = await startTestBackend({
        features: [
          mcpBrokerPlugin,
          mockServices.rootConfig.factory({ data: configOf(server.url) }),
        ],
      }));
      base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker`;
      client = new McpBrokerClient({ baseUrl: base });
      mcp = new Client({ name: 'rest-contract', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
      await waitFor(
        async () => (await mcp.listTools()).tools.some(t => t.name === 'a_echo'),
        'the broker to list the server',
      );
      await mcp.callTool({ name: 'a_echo', arguments: { message: 'counted' } });
      await waitFor(
        async () => (await client.getMyUsage()).days.length > 0,
        'the call to be flushed into the usage counts',
      );
    }, 60_000);

    afterAll(async () => {
      await mcp?.close();
      await http?.stop?.();
    });

    /** Each answer the real plugin gives to a read, by operation. */
    const reads: Array<[BrokerOperationId, () => Promise<unknown>]> = [
      ['getHealth', () => client.getHealth()],
      ['getStatus', () => client.getStatus()],
      ['getCatalog', () => client.getCatalog()],
      ['listServers', () => client.listServers()],
      ['getServer', () => client.getServer({ kind: 'server', name: 'a' })],
      ['getMyUsage', () => client.getMyUsage({ days: 7 })],
      ['listServerUsage', () => client.listServerUsage()],
      ['getServerUsage', () => client.getServerUsage({ server: 'a' }, { limit: 10 })],
      ['listToolChanges', () => client.listToolChanges()],
      ['listCredentials', () => client.listCredentials()],
    ];

    it.each(reads)('answers %s as its response schema says, field for field', async (id, read) => {
      const answer = await read();
      const schema = (brokerOperations[id] as { response: { parse(v: unknown): unknown } })
        .response;
      expect(schema.parse(answer)).toEqual(answer);
    });

    it('answers reads with content: servers with tools, usage with the counted call', async () => {
      const servers = await client.listServers();
      expect(servers.items[0].tools.map(t => t.brokerName)).toContain('a_echo');
      const usage = await client.getServerUsage({ server: 'a' });
      expect(usage.series).toEqual([expect.objectContaining({ tool: 'echo', calls: 1 })]);
      expect(usage.people).toEqual([expect.objectContaining({ calls: 1 })]);
      const status = await client.getStatus();
      expect(status.backends[0]).toMatchObject({ name: 'a', state: 'connected' });
    });

    it.each([
      ['/servers/widget/a', /kind must be "server" or "endpoint"/],
      ['/usage/servers/A_B', /server must be a server name/],
      ['/usage/my?dayz=3', /unknown query parameter "dayz" \(allowed: days, server\)/],
      ['/usage/servers/a?limit=0', /limit must be a whole number from 1 to 1000/],
    ])('answers GET %s with a 400 naming the parameter', async (path, message) => {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(body.error).toMatchObject({ name: 'InputError' });
      expect(body.error.message).toMatch(message);
    });

    it('answers a decision with a bad body with a 400 naming the field', async () => {
      const response = await fetch(`${base}/pins/a/echo/approve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ digest: 'abc', extra: true }),
      });
      expect(response.status).toBe(400);
      const { error } = await response.json();
      expect(error.message).toMatch(/digest must be the 64 hex digits/);
      expect(error.message).toMatch(/unknown field "extra"/);
    });
  });
});
