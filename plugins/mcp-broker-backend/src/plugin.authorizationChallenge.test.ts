/*
 * The 401 of /mcp carries the OAuth challenge MCP clients sign in from (spec §10), on every
 * method and mistake of both eras, while /status keeps Backstage's plain 401 (startTestBackend;
 * Backstage's mock httpAuth, with anonymous requests unauthenticated as with the real one).
 */
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { initializeRequest } from './testing/initializeRequest';

type Server = Parameters<typeof request>[0];

describe('mcpBrokerPlugin authentication challenge (startTestBackend, Backstage mock httpAuth)', () => {
  let server: Server & { stop?: () => Promise<void>; address(): unknown };
  let metadataUrl: string;

  beforeAll(async () => {
    ({ server } = (await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.httpAuth.factory({ defaultCredentials: mockCredentials.none() }),
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [], endpoints: { triage: { servers: ['jira'] } } } },
        }),
      ],
    })) as unknown as { server: typeof server });
    const { port } = server.address() as { port: number };
    metadataUrl = `http://localhost:${port}/.well-known/oauth-protected-resource/api/mcp-broker/mcp`;
  });
  afterAll(async () => {
    await server.stop?.();
  });

  const post = (authorization: string | undefined, body: unknown, path = '/api/mcp-broker/mcp') => {
    const call = request(server)
      .post(path)
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream');
    if (authorization !== undefined) call.set('Authorization', authorization);
    return call.send(JSON.stringify(body));
  };
  const modernDiscover = {
    jsonrpc: '2.0',
    id: 1,
    method: 'server/discover',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };

  it.each([
    ['no Authorization header', undefined, ''],
    ['a header of another scheme', 'Basic dXNlcjpwYXNz', ''],
    [
      'a refused bearer token',
      mockCredentials.user.invalidHeader(),
      'error="invalid_token", error_description="The access token is invalid or has expired", ',
    ],
  ])(
    'answers %s with 401, the challenge and a JSON-RPC error, on every method of both eras',
    async (_what, authorization, error) => {
      const withAuthorization = <T extends { set(name: string, value: string): T }>(call: T) =>
        authorization === undefined ? call : call.set('Authorization', authorization);
      const answers = await Promise.all([
        post(authorization, initializeRequest()),
        post(authorization, modernDiscover).set('MCP-Protocol-Version', '2026-07-28'),
        post(authorization, '{not json'),
        withAuthorization(request(server).get('/api/mcp-broker/mcp')),
        withAuthorization(request(server).delete('/api/mcp-broker/mcp')),
        withAuthorization(request(server).put('/api/mcp-broker/mcp')),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(answer.headers['www-authenticate']).toBe(
          `Bearer ${error}resource_metadata="${metadataUrl}"`,
        );
        expect(answer.body).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32000, message: expect.stringMatching(/^Unauthorized: /) },
        });
      }
    },
  );

  it("names a curated endpoint's own metadata in its 401s, known name or not, and serves it", async () => {
    const { port } = server.address() as { port: number };
    const endpointMetadata = (name: string) =>
      `http://localhost:${port}/.well-known/oauth-protected-resource/api/mcp-broker/endpoints/${name}/mcp`;
    for (const name of ['triage', 'not-configured']) {
      const answers = await Promise.all([
        post(undefined, initializeRequest(), `/api/mcp-broker/endpoints/${name}/mcp`),
        request(server).get(`/api/mcp-broker/endpoints/${name}/mcp`),
        request(server).post(`/api/mcp-broker/endpoints/${name}/mcp/below`),
        post(mockCredentials.user.invalidHeader(), {}, `/api/mcp-broker/endpoints/${name}/mcp`),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(answer.headers['www-authenticate']).toMatch(
          new RegExp(`resource_metadata="${endpointMetadata(name)}"$`),
        );
      }
    }
    const metadata = await request(server).get(new URL(endpointMetadata('triage')).pathname);
    expect(metadata.status).toBe(200);
    expect(metadata.body.resource).toBe(
      `http://localhost:${port}/api/mcp-broker/endpoints/triage/mcp`,
    );
    const local = await request(server).get(
      '/api/mcp-broker/.well-known/oauth-protected-resource/endpoints/triage/mcp',
    );
    expect(local.status).toBe(200);
    expect(local.body).toEqual(metadata.body);
  });

  it('never reads a token from the query string, and says so', async () => {
    const token = mockCredentials.user.token('user:default/alice');
    const answer = await post(
      undefined,
      initializeRequest(),
      `/api/mcp-broker/mcp?access_token=${token}`,
    );
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(`Bearer resource_metadata="${metadataUrl}"`);
    expect(answer.body.error.message).toMatch(
      /a token in the URL \(access_token\) is never accepted/,
    );
    // The same token in the header is accepted.
    const accepted = await post(`Bearer ${token}`, initializeRequest());
    expect(accepted.status).toBe(200);
  });

  it('keeps the plain Backstage 401 on /status (not an MCP endpoint)', async () => {
    const answer = await request(server).get('/api/mcp-broker/status');
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBeUndefined();
    expect(answer.body.error.name).toBe('AuthenticationError');
  });

  it('serves the resource metadata the challenge names, unauthenticated', async () => {
    const metadata = await request(server).get(new URL(metadataUrl).pathname);
    expect(metadata.status).toBe(200);
    expect(metadata.body).toMatchObject({
      resource: metadataUrl.replace('/.well-known/oauth-protected-resource', ''),
      bearer_methods_supported: ['header'],
    });
  });
});
