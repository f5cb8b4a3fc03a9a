/*
 * The broker authenticates /mcp and /status itself and remembers verified tokens, instead of
 * Backstage's barrier verifying every request (startTestBackend; httpAuth is Backstage's mock
 * wrapped in a counter, so the number of verifications per request is visible).
 */
import { coreServices, createServiceFactory, HttpAuthService } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { initializeRequest } from './testing/initializeRequest';

type Server = Parameters<typeof request>[0];

const initialize = initializeRequest();
const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

function post(server: Server, authorization: string, body: unknown, sessionId?: string) {
  const call = request(server)
    .post('/api/mcp-broker/mcp')
    .set('Authorization', authorization)
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream');
  if (sessionId !== undefined) call.set('Mcp-Session-Id', sessionId);
  return call.send(typeof body === 'string' ? body : JSON.stringify(body));
}

async function startBroker() {
  // Requests without a token are anonymous here (401), as with the real httpAuth.
  const inner = mockServices.httpAuth({
    pluginId: 'mcp-broker',
    defaultCredentials: mockCredentials.none(),
  });
  const calls = new Map<string, number>();
  const counting: HttpAuthService = {
    credentials: ((req, options) => {
      const header = String(req.headers.authorization);
      calls.set(header, (calls.get(header) ?? 0) + 1);
      return inner.credentials(req, options);
    }) as HttpAuthService['credentials'],
    issueUserCookie: (res, options) => inner.issueUserCookie(res, options),
  };
  const { server } = await startTestBackend({
    features: [
      mcpBrokerPlugin,
      createServiceFactory({ service: coreServices.httpAuth, deps: {}, factory: () => counting }),
      mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
    ],
  });
  return { server, calls };
}

describe('mcpBrokerPlugin token verification (startTestBackend, Backstage mock httpAuth test double with a counter)', () => {
  let server: Server & { stop?: () => Promise<void> };
  let calls: Map<string, number>;
  const alice = mockCredentials.user.header('user:default/alice');
  const bob = mockCredentials.user.header('user:default/bob');

  beforeAll(async () => {
    ({ server, calls } = await startBroker());
  });
  afterAll(async () => {
    await server.stop?.();
  });

  it('verifies a session token once, not on every POST, and keeps sessions per principal', async () => {
    const init = await post(server, alice, initialize);
    expect(init.status).toBe(200);
    const sessionId = init.headers['mcp-session-id'];
    for (let i = 0; i < 3; i += 1) {
      const listed = await post(server, alice, toolsList, sessionId);
      expect(listed.status).toBe(200);
    }
    // Two credential reads for four requests (before: two per request, barrier and handler): one
    // to authenticate, one for the principal's permission decision on the same first request
    // (Backstage's real httpAuth answers that one from its per-request cache; this counter does not).
    expect(calls.get(alice)).toBe(2);

    const asBob = await post(server, bob, toolsList, sessionId);
    expect(asBob.status).toBe(404);
    expect(asBob.body.error.message).toMatch(/belongs to someone else/);
    expect(calls.get(bob)).toBe(1);
    const status = await request(server).get('/api/mcp-broker/status').set('Authorization', alice);
    expect(status.status).toBe(200);
    // The status permission came with the same decision: nothing verified again.
    expect(calls.get(alice)).toBe(2);
  });

  it.each([
    ['no token', mockCredentials.none.header()],
    ['an invalid token', mockCredentials.user.invalidHeader()],
  ])(
    'answers 401 with %s on every method and mistake, before anything else',
    async (_what, authorization) => {
      const before = calls.get(authorization) ?? 0;
      const responses = await Promise.all([
        post(server, authorization, initialize),
        post(server, authorization, '{not json'),
        post(server, authorization, toolsList, 'some-session'),
        request(server)
          .get('/api/mcp-broker/mcp')
          .set('Authorization', authorization)
          .set('Accept', 'text/event-stream'),
        request(server).delete('/api/mcp-broker/mcp').set('Authorization', authorization),
        request(server).put('/api/mcp-broker/mcp').set('Authorization', authorization),
        request(server).get('/api/mcp-broker/mcp/anything').set('Authorization', authorization),
        request(server).get('/api/mcp-broker/status').set('Authorization', authorization),
        // A wrong Host is 403 only for authenticated callers; anonymous ones learn nothing but 401.
        post(server, authorization, initialize).set('Host', 'evil.example'),
      ]);
      expect(responses.map(r => r.status)).toEqual(responses.map(() => 401));
      // Failures are not remembered: each request was verified.
      expect((calls.get(authorization) ?? 0) - before).toBe(responses.length);
    },
  );

  it('leaves /health open', async () => {
    const health = await request(server)
      .get('/api/mcp-broker/health')
      .set('Authorization', mockCredentials.none.header());
    expect(health.status).toBe(200);
  });
});
