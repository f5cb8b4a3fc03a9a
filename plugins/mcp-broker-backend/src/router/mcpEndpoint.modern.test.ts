/*
 * The stateless (2026-07-28) request path of the router: its methods in the method table, the
 * caller's pool key, and the behaviour at the endpoint in a test backend (startTestBackend with
 * mocked auth and a permissions test double; a real scripted MCP server behind the broker).
 */
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startRawMcpBackend } from '@internal/test-mcp-backends';
import { mcpBrokerPlugin } from '../plugin';
import { startScriptedMcpServer, type ScriptedMcpServer } from '../testing/scriptedMcpServer';
import { switchablePermissions } from '../__testUtils__/switchablePermissions';
import { waitFor } from '../testing/waitFor';
import type { McpBroker } from '../broker/McpBroker';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import { modernCallerOf } from './callMethods';
import { createMethodTable, methodOf } from './methodTable';
import type { PrincipalAccessDeps } from './principalAccess';
import { withModernEnvelope } from '../backend/ModernChannel';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';

/** A 2026-07-28 request with the per-request `_meta` envelope the broker itself sends. */
function modernBody(id: number, method: string, params: Record<string, unknown> = {}) {
  return withModernEnvelope({ jsonrpc: '2.0', id, method, params }, {});
}

/**
 * The request methods a 2026-07-28 client may send (`schema.ts` `ClientRequest`), written here
 * from the specification so that the table is checked against it, not against itself.
 */
const MODERN_CLIENT_METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
  // The tasks extension (docs/contracts/tasks-and-apps.md §2.12.2); no tasks/result, tasks/list.
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
];

describe('the method table: the 2026-07-28 era', () => {
  // Handlers are bound to these but not run here.
  const table = createMethodTable({
    broker: {} as McpBroker,
    access: {} as PrincipalAccessDeps['access'],
    httpAuth: {} as PrincipalAccessDeps['httpAuth'],
    toolCallAuditor: {} as ToolCallAuditor,
  });
  const isServedModernMethod = (method: string) => methodOf(table, method, 'modern') !== undefined;

  it('serves every 2026-07-28 client method, and no other', () => {
    const served = [...table.keys()].filter(isServedModernMethod).sort();
    expect(served).toEqual([...MODERN_CLIENT_METHODS].sort());
    for (const method of [
      'ping',
      'initialize',
      'logging/setLevel',
      'tasks/result',
      'tasks/list',
      'toString',
      '__proto__',
    ]) {
      expect(isServedModernMethod(method)).toBe(false);
    }
  });
});

describe('the 2026-07-28 caller: modernCallerOf', () => {
  const context = (clientCapabilities: Record<string, unknown>) => ({
    protocolVersion: MODERN_PROTOCOL_VERSION,
    clientCapabilities,
  });

  it('gives one pool key to one principal with equal relayed capabilities, in any key order', () => {
    const a = modernCallerOf('user:default/alice', context({ elicitation: {}, sampling: {} }));
    const b = modernCallerOf('user:default/alice', context({ sampling: {}, elicitation: {} }));
    expect(a.poolKey).toBe(b.poolKey);
    expect(a).toMatchObject({ era: 'modern', principal: 'user:default/alice' });
  });

  it('separates principals and capabilities', () => {
    const alice = modernCallerOf('user:default/alice', context({ elicitation: {} }));
    expect(modernCallerOf('user:default/bob', context({ elicitation: {} })).poolKey).not.toBe(
      alice.poolKey,
    );
    expect(modernCallerOf('user:default/alice', context({})).poolKey).not.toBe(alice.poolKey);
    expect(
      modernCallerOf('user:default/alice', context({ elicitation: { url: {} } })).poolKey,
    ).not.toBe(alice.poolKey);
  });
});

describe('the 2026-07-28 request path at the endpoint (startTestBackend, mocked auth, scripted server)', () => {
  let backend: ScriptedMcpServer;
  let permissionsAvailable = true;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];

  beforeAll(async () => {
    backend = await startScriptedMcpServer({ tools: ['echo'] });
    const flaky = switchablePermissions(() => permissionsAvailable);
    ({ server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        flaky,
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [{ name: 'scripted', url: backend.url }] } },
        }),
      ],
    }));
    await waitFor(async () => {
      const status = await request(http).get('/api/mcp-broker/status');
      return status.body.backends?.[0]?.state === 'connected';
    });
  });

  afterAll(async () => {
    await http?.stop?.();
    await backend?.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    request(http)
      .post('/api/mcp-broker/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', MODERN_PROTOCOL_VERSION)
      .set('Mcp-Method', (body as { method: string }).method)
      .set(headers)
      .send(JSON.stringify(body));

  it('answers without a session, with the default list ttl and a private scope', async () => {
    const response = await post(modernBody(1, 'tools/list'));
    expect(response.status).toBe(200);
    expect(response.headers['mcp-session-id']).toBeUndefined();
    expect(response.body.result).toMatchObject({
      tools: [expect.objectContaining({ name: 'scripted_echo' })],
      resultType: 'complete',
      ttlMs: 30_000,
      cacheScope: 'private',
    });
  });

  it('calls a tool statelessly and answers a complete result', async () => {
    const response = await post(
      modernBody(2, 'tools/call', { name: 'scripted_echo', arguments: { text: 'hi' } }),
      { 'Mcp-Name': 'scripted_echo' },
    );
    expect(response.status).toBe(200);
    expect(response.text).toContain('"resultType":"complete"');
    expect(response.text).toContain('"id":2');
  });

  it('accepts a 2026-07-28 notification with 202 and sends it nowhere', async () => {
    const response = await post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, _meta: modernBody(0, 'x').params?._meta },
    });
    expect(response.status).toBe(202);
  });

  it('still asks a request without the envelope and a 2025 header for its session', async () => {
    const response = await request(http)
      .post('/api/mcp-broker/mcp')
      .set('Content-Type', 'application/json')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2025-11-25')
      .send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }));
    expect(response.status).toBe(400);
    expect(response.body.error.message).toMatch(/Mcp-Session-Id/);
  });

  it('answers an unknown method 404 -32601 before asking for permissions', async () => {
    permissionsAvailable = false;
    try {
      const response = await post(modernBody(4, 'resources/subscribe', { uri: 'x://y' }));
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe(-32601);
    } finally {
      permissionsAvailable = true;
    }
  });

  it("keeps the session era's edge checks: Origin, JSON depth", async () => {
    const foreign = await post(modernBody(6, 'tools/list'), { Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    let deep: unknown = {};
    for (let i = 0; i < 80; i++) deep = { deep };
    const nested = await post(
      modernBody(7, 'tools/call', { name: 'scripted_echo', arguments: { deep } }),
      { 'Mcp-Name': 'scripted_echo' },
    );
    expect(nested.status).toBe(400);
    expect(nested.body.error.message).toMatch(/nested deeper than/);
  });

  it('fails closed with 503 while the permission backend cannot be asked', async () => {
    permissionsAvailable = false;
    try {
      // A fresh principal, so no cached decision answers.
      const response = await post(modernBody(5, 'tools/list'), {
        Authorization: mockCredentials.user.header('user:default/someone-new'),
      });
      expect(response.status).toBe(503);
      expect(response.body.error.message).toMatch(/retry/);
      expect(JSON.stringify(response.body)).not.toContain('ECONNREFUSED');
    } finally {
      permissionsAvailable = true;
    }
  });
});

describe('the 2026-07-28 request path while the broker drains (startTestBackend, raw test backend)', () => {
  it('refuses new stateless requests with 503 and ends a held call with a retryable error', async () => {
    const raw = await startRawMcpBackend();
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'raw', url: raw.url }],
              shutdownDrainTimeout: { seconds: 1 },
            },
          },
        }),
      ],
    });
    const port = (backend.server.address() as AddressInfo).port;
    const endpoint = `http://127.0.0.1:${port}/api/mcp-broker/mcp`;
    const modernPost = (body: ReturnType<typeof modernBody>, name?: string) =>
      fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
          'mcp-method': body.method,
          ...(name === undefined ? {} : { 'mcp-name': name }),
        },
        body: JSON.stringify(body),
      });
    try {
      await waitFor(async () => {
        const listed = await (await modernPost(modernBody(1, 'tools/list'))).json();
        return listed.result?.tools?.some((t: { name: string }) => t.name === 'raw_hold');
      });
      const held = await modernPost(
        modernBody(2, 'tools/call', { name: 'raw_hold', arguments: {} }),
        'raw_hold',
      );
      await waitFor(() => raw.requests.some(r => r.method === 'tools/call'));
      const stopped = backend.stop();
      const refused = await waitFor(async () => {
        const response = await modernPost(modernBody(3, 'tools/list'));
        return response.status === 503 ? response : undefined;
      });
      expect(refused!.headers.get('retry-after')).toBe('1');
      expect((await refused!.json()).error.message).toMatch(/shutting down/);
      expect(await held.text()).toMatch(/shutting down .*may be retried/);
      await stopped;
    } finally {
      await raw.close();
    }
  }, 30_000);
});
