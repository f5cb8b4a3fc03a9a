/*
 * Every method that reaches a backend on a person's behalf is rate limited (spec §11.1, §12),
 * end to end on the development backend (real auth and catalog): the whoami server acts with each
 * person's own exchanged token (`tokenExchange` against the test RFC 8693 server), under a limit
 * of four requests per person per hour (the default `mcpBroker.rateLimits.methods`: the four
 * methods the method table marks `limited`). Alice (the official SDK 1.x client, 2025-11-25) and
 * bob (raw 2026-07-28 requests) each spend their four on `tools/call`, `prompts/get`,
 * `resources/read` and `completion/complete`; then each of the four is refused, never reaches
 * the backend, and is audited.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  startTokenExchangeServer,
  startWhoamiServer,
  type TokenExchangeServer,
  type WhoamiServer,
} from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { auditLines, toolCallAuditLines, waitFor, waitForBrokerBackends } from './brokerTestKit';
import { modernRequest, postModernRequest } from './__testUtils__/modernBrokerClient';

const BROKER_TOKEN = 'broker-own-token';
const LIMITED = ['tools/call', 'prompts/get', 'resources/read', 'completion/complete'] as const;
type Limited = (typeof LIMITED)[number];

/** The params of each limited method, for the whoami server's items (prefixed by the broker). */
const PARAMS = {
  'tools/call': { name: 'whoami_whoami', arguments: {} },
  'prompts/get': { name: 'whoami_whoami' },
  'resources/read': { uri: 'whoami://me' },
  'completion/complete': {
    ref: { type: 'ref/prompt' as const, name: 'whoami_whoami' },
    argument: { name: 'who', value: '' },
  },
};

/** The `sub` of a bearer JWT (the whoami server verified it; the test only reads it). */
function subjectOf(authorization: string | undefined): string | undefined {
  const payload = /^Bearer [^.]+\.([^.]+)\./.exec(authorization ?? '')?.[1];
  return payload && JSON.parse(Buffer.from(payload, 'base64url').toString()).sub;
}

describe('rate limits on every method that reaches a backend on a person’s behalf (spec §12)', () => {
  let backend: BackendProcess;
  let sts: TokenExchangeServer;
  let whoami: WhoamiServer;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    sts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'exchange-secret' },
      trustedIssuers: [],
      allowedTargets: ['whoami'],
    });
    whoami = await startWhoamiServer({
      era: 'legacy',
      brokerToken: BROKER_TOKEN,
      jwt: { jwksUrl: sts.jwksUrl, issuer: sts.issuer, audience: 'whoami' },
    });
    backend = await startBackendProcess({
      config: baseUrl => {
        sts.trust({
          issuer: `${baseUrl}/api/mcp-broker`,
          jwksUrl: `${baseUrl}/api/mcp-broker/.well-known/jwks.json`,
        });
        return {
          mcpBroker: {
            servers: [
              {
                name: 'whoami',
                url: whoami.url,
                headers: { Authorization: `Bearer ${BROKER_TOKEN}` },
                auth: {
                  mode: 'tokenExchange',
                  tokenEndpoint: sts.tokenEndpoint,
                  clientId: 'mcp-broker',
                  clientSecret: 'exchange-secret',
                  audience: 'whoami',
                },
              },
            ],
            rateLimits: { overrides: [{ server: 'whoami', calls: 4, per: { hours: 1 } }] },
          },
        };
      },
      env: { LOG_LEVEL: 'info' },
      startTimeoutMs: 120_000,
    });
    for (const user of ['alice', 'bob', 'carol']) tokens[user] = await backend.signIn(user);
    await waitForBrokerBackends(
      backend.baseUrl,
      tokens.carol,
      b => b.state === 'connected' && b.counts.prompts > 0,
      'the broker to list the whoami server',
    );
  }, 180_000);

  afterAll(async () => {
    await backend?.stop();
    await Promise.all([whoami?.close(), sts?.close()]);
  }, 30_000);

  /** How many requests of each limited method reached the backend with `user`'s own token. */
  const reached = (user: string) =>
    LIMITED.map(
      method =>
        whoami.received.filter(
          r => r.method === method && subjectOf(r.authorization) === `user:default/${user}`,
        ).length,
    );

  /** The refusals of `user` in the audit trail, by method. */
  const auditedRefusals = (user: string) =>
    [
      ...toolCallAuditLines(backend.output()).map(l => ({ ...l, method: 'tools/call' })),
      ...auditLines(backend.output(), 'mcp-broker.request'),
    ]
      .map(l => l as Record<string, any>)
      .filter(l => l.principal === `user:default/${user}` && l.outcome === 'rate-limited')
      .map(l => l.method)
      .sort();

  /** Waits for one audited refusal of each limited method of `user`. */
  async function expectEachMethodRefusedInAudit(user: string) {
    await waitFor(
      () => auditedRefusals(user).length === LIMITED.length,
      10_000,
      `${user}'s refusals in the audit trail`,
    );
    expect(auditedRefusals(user)).toEqual([...LIMITED].sort());
  }

  it('counts each of the four methods of a 2025-11-25 client, then refuses each before it reaches the backend, and audits it', async () => {
    const client = new Client({ name: 'limits-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens.alice}` } },
      }),
    );
    const send: Record<Limited, () => Promise<unknown>> = {
      'tools/call': () => client.callTool(PARAMS['tools/call']),
      'prompts/get': () => client.getPrompt(PARAMS['prompts/get']),
      'resources/read': () => client.readResource(PARAMS['resources/read']),
      'completion/complete': () => client.complete(PARAMS['completion/complete']),
    };
    try {
      for (const method of LIMITED) await send[method]();
      expect(reached('alice')).toEqual([1, 1, 1, 1]);
      for (const method of LIMITED) {
        await expect(send[method]()).rejects.toThrow(
          /Rate limit reached: 4 requests per hour on server \\*"whoami\\*" for each person; retry in \d+ s/,
        );
      }
      expect(reached('alice')).toEqual([1, 1, 1, 1]);
    } finally {
      await client.close();
    }
    await expectEachMethodRefusedInAudit('alice');
  }, 60_000);

  it('does the same for 2026-07-28 requests: 429, Retry-After and -32000 rate-limited for each method', async () => {
    let id = 0;
    for (const method of LIMITED) {
      const { status } = await modernRequest(
        backend.baseUrl,
        tokens.bob,
        (id += 1),
        method,
        PARAMS[method],
      );
      expect(status).toBe(200);
    }
    expect(reached('bob')).toEqual([1, 1, 1, 1]);
    for (const method of LIMITED) {
      const refused = await postModernRequest(
        backend.baseUrl,
        tokens.bob,
        (id += 1),
        method,
        PARAMS[method],
      );
      const { error } = await refused.json();
      expect({
        method,
        status: refused.status,
        retryAfter: Number(refused.headers.get('retry-after')) > 0,
        error,
      }).toMatchObject({
        method,
        status: 429,
        retryAfter: true,
        error: { code: -32000, data: { reason: 'rate-limited', retryAfterMs: expect.any(Number) } },
      });
    }
    expect(reached('bob')).toEqual([1, 1, 1, 1]);
    await expectEachMethodRefusedInAudit('bob');
  }, 60_000);
});
