/*
 * The broker remembers verified bearer tokens (VerifiedPrincipalCache) instead of letting
 * Backstage verify the JWT on every request: end to end with real signed user tokens, the static
 * development token, and tokens that must never be answered from the cache.
 */
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { LEGACY_INITIALIZE_REQUEST, mcpRawPost } from '../testing/mcpRawPost';

const STATIC_TOKEN = 'dev-only-static-token-0123456789'; // app-config.yaml, development only

describe('the broker with remembered token verifications (real backend process, real sign-in)', () => {
  let backend: BackendProcess;
  let alice: string;
  let bob: string;
  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;

  const post = (token: string, body: unknown, sessionId?: string) =>
    mcpRawPost(mcpUrl(), token, body, { sessionId });
  const initialize = LEGACY_INITIALIZE_REQUEST;
  const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

  async function startSession(token: string): Promise<string> {
    const response = await post(token, initialize);
    expect(response.status).toBe(200);
    return response.headers.get('mcp-session-id')!;
  }

  /** The token with its payload replaced (same header and signature): a forgery. */
  function withPayload(token: string, change: Record<string, unknown>): string {
    const [header, payload, signature] = token.split('.');
    const claims = { ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), ...change };
    return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
  }

  beforeAll(async () => {
    backend = await startBackendProcess({ config: { mcpBroker: { servers: [] } } });
    alice = await backend.signIn('alice');
    bob = await backend.signIn('bob');
  }, 90_000);

  afterAll(async () => {
    await backend?.stop();
  }, 30_000);

  it('serves repeated requests with one token and keeps each session to its own principal', async () => {
    const aliceSession = await startSession(alice);
    expect((await post(alice, toolsList, aliceSession)).status).toBe(200);
    expect((await post(alice, toolsList, aliceSession)).status).toBe(200);

    // Bob's token (verified and remembered on its own) never gets alice's principal.
    const bobSession = await startSession(bob);
    const bobOnAlice = await post(bob, toolsList, aliceSession);
    expect(bobOnAlice.status).toBe(404);
    expect((await bobOnAlice.json()).error.message).toMatch(/belongs to someone else/);
    expect((await post(alice, toolsList, bobSession)).status).toBe(404);
    expect((await post(bob, toolsList, bobSession)).status).toBe(200);

    // The static service token works the same way, as a service principal.
    const serviceSession = await startSession(STATIC_TOKEN);
    expect((await post(STATIC_TOKEN, toolsList, serviceSession)).status).toBe(200);
    expect((await post(STATIC_TOKEN, toolsList, serviceSession)).status).toBe(200);
    expect((await post(alice, toolsList, serviceSession)).status).toBe(404);
  }, 30_000);

  it('answers 401 to forged, expired-looking and garbage tokens while the real one is remembered', async () => {
    const aliceSession = await startSession(alice);
    expect((await post(alice, toolsList, aliceSession)).status).toBe(200);
    const forgeries = [
      withPayload(alice, { sub: 'user:default/bob' }),
      withPayload(alice, { exp: Math.floor(Date.now() / 1000) - 60 }),
      `${alice.slice(0, alice.lastIndexOf('.') + 1)}${Buffer.alloc(64).toString('base64url')}`,
      'not-a-token-at-all',
    ];
    for (const forged of forgeries) {
      // Twice: a failure is never remembered, and the second answer is the same.
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const response = await post(forged, toolsList, aliceSession);
        expect(response.status).toBe(401);
      }
    }
    const anonymous = await fetch(mcpUrl(), {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(anonymous.status).toBe(401);
    expect((await post(alice, toolsList, aliceSession)).status).toBe(200);
    expect(backend.output()).not.toContain(alice.split('.')[2]);
  }, 30_000);
});
