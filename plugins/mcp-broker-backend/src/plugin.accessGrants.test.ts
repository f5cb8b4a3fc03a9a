/*
 * The broker's extension point for access grant sources and the rule HAS_ACCESS_GRANT
 * (docs/contracts/mcp-access.md §5.1, §6.1–6.2) on the real plugin (startTestBackend, its
 * database on SQLite, a real example MCP server): a module adds a source, the broker starts it
 * with a writer over its migrated database, the writer stores and removes grants under the
 * source's prefix and refuses malformed ones; two sources with one id fail start-up; a policy
 * whose condition is HAS_ACCESS_GRANT shows a person the tools of the servers they were granted,
 * and stops showing them when the grant is removed — without asking the policy again. The source
 * is the test's own (what the portal's module will be); the permission policy is a test double
 * answering the conditional decision RBAC would give for one conditional line. A person's plan
 * limits their calls, and the audit trail names the grant that admitted or refused a call
 * (§6.4; the auditor is a test double that records the events).
 */
import {
  coreServices,
  createBackendModule,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  MCP_BROKER_PROMPT_RESOURCE_TYPE,
  MCP_BROKER_RESOURCE_RESOURCE_TYPE,
  MCP_BROKER_TOOL_RESOURCE_TYPE,
} from '@devportal/plugin-mcp-broker-common';
import { startExampleMcpServer } from '@internal/example-mcp-server';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { initializeRequest } from './testing/initializeRequest';
import { waitFor } from './testing/waitFor';
import {
  mcpAccessGrantsExtensionPoint,
  type McpAccessGrantSource,
  type McpAccessGrantWriter,
} from '@devportal/plugin-mcp-broker-node';
import { mcpBrokerPlugin } from './plugin';
import { testGrant } from './grants/__testUtils__/testGrant';

/** A source that hands the test the writer it is started with. */
function recordingSource(id: string) {
  let started!: (writer: McpAccessGrantWriter) => void;
  const writer = new Promise<McpAccessGrantWriter>(resolve => (started = resolve));
  const source: McpAccessGrantSource = {
    id,
    async *listAll() {
      yield [];
    },
    async start(w) {
      started(w);
    },
  };
  return { source, writer };
}

/** Reads an SSE response until its text holds `marker`, then stops reading. */
async function readUntil(response: Response, marker: string): Promise<void> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(marker)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before ${marker}`);
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
}

const sourceModule = (moduleId: string, source: McpAccessGrantSource) =>
  createBackendModule({
    pluginId: 'mcp-broker',
    moduleId,
    register(env) {
      env.registerInit({
        deps: { grants: mcpAccessGrantsExtensionPoint },
        async init({ grants }) {
          grants.addGrantSource(source);
        },
      });
    },
  });

const grant = testGrant({ id: 'key-uid-1', limits: [{ calls: 5, windowMs: 60_000 }] });

describe('mcpBrokerPlugin access grant sources (startTestBackend)', () => {
  it('starts a module’s source with a writer over the broker’s database', async () => {
    const { source, writer } = recordingSource('portal');
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        sourceModule('test-grants', source),
        mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
      ],
    });
    try {
      const w = await writer;
      await w.upsert([grant]);
      await w.replaceGroup('default/example-tools', [{ ...grant, plan: 'silver' }]);
      await w.remove([grant.id]);
      await expect(w.upsert([{ ...grant, subject: 'alice' }])).rejects.toThrow(
        /Invalid MCP access grant "key-uid-1" from source portal: subject must be a user entity ref/,
      );
    } finally {
      await backend.stop();
    }
  });

  it('fails start-up when two sources share an id', async () => {
    await expect(
      startTestBackend({
        features: [
          mcpBrokerPlugin,
          sourceModule('first', recordingSource('portal').source),
          sourceModule('second', recordingSource('portal').source),
          mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
        ],
      }),
    ).rejects.toThrow(/Two MCP access grant sources have the id "portal"/);
  });

  it('shows a person the tools of a server they were granted (HAS_ACCESS_GRANT), and no more once the grant is gone', async () => {
    const example = await startExampleMcpServer({ port: 0 });
    const { source, writer } = recordingSource('portal');
    let authorizeCalls = 0;
    const granted = (resourceType: string) => ({
      result: AuthorizeResult.CONDITIONAL,
      pluginId: 'mcp-broker',
      resourceType,
      conditions: {
        rule: 'HAS_ACCESS_GRANT',
        resourceType,
        params: { claims: ['user:default/alice'] },
      },
    });
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        sourceModule('test-grants', source),
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [{ name: 'example', url: example.url }] } },
        }),
        // What RBAC answers for `mcp-broker.tool.use` etc. under one conditional line.
        createServiceFactory({
          service: coreServices.permissions,
          deps: {},
          factory: () => ({
            authorize: async (requests: any[]) =>
              requests.map(() => ({ result: AuthorizeResult.ALLOW })),
            authorizeConditional: async () => {
              authorizeCalls += 1;
              return [
                { result: AuthorizeResult.ALLOW },
                { result: AuthorizeResult.ALLOW },
                granted(MCP_BROKER_TOOL_RESOURCE_TYPE),
                granted(MCP_BROKER_PROMPT_RESOURCE_TYPE),
                granted(MCP_BROKER_RESOURCE_RESOURCE_TYPE),
              ];
            },
          }),
        }),
      ],
    });
    const alice = mockCredentials.user.header('user:default/alice');
    const post = (body: unknown, sessionId?: string) => {
      const call = request(backend.server)
        .post('/api/mcp-broker/mcp')
        .set('Authorization', alice)
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream');
      if (sessionId !== undefined) call.set('Mcp-Session-Id', sessionId);
      return call.send(JSON.stringify(body));
    };
    const toolNames = async (sessionId: string) => {
      const listed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
      expect(listed.status).toBe(200);
      return (listed.body.result.tools as Array<{ name: string }>).map(t => t.name);
    };
    try {
      const init = await post(initializeRequest());
      expect(init.status).toBe(200);
      const sessionId = init.headers['mcp-session-id'];
      // The example server is up, but alice holds no grant: she sees none of its tools.
      await waitFor(
        async () =>
          (await request(backend.server).get('/api/mcp-broker/status')).body.backends?.[0]
            ?.state === 'connected',
      );
      expect(await toolNames(sessionId)).toEqual([]);
      const callsBefore = authorizeCalls;
      // Her session's GET stream hears that her lists changed when she is granted.
      const { port } = backend.server.address() as AddressInfo;
      const stream = await fetch(`http://127.0.0.1:${port}/api/mcp-broker/mcp`, {
        headers: { Authorization: alice, Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId },
      });
      expect(stream.status).toBe(200);
      const heard = readUntil(stream, 'notifications/tools/list_changed');
      // Granted: her next list shows the server's tools, with no new permission round trip.
      const w = await writer;
      await w.upsert([{ ...grant, subject: 'user:default/Alice' }]);
      await heard;
      const withGrant = await toolNames(sessionId);
      expect(withGrant.length).toBeGreaterThan(0);
      expect(withGrant.every(name => name.startsWith('example_'))).toBe(true);
      // Revoked: gone from her next list.
      await w.remove([grant.id]);
      expect(await toolNames(sessionId)).toEqual([]);
      expect(authorizeCalls).toBe(callsBefore);
      // A grant on another server shows nothing of this one.
      await w.upsert([{ ...grant, id: 'key-uid-2', target: { kind: 'server', name: 'other' } }]);
      expect(await toolNames(sessionId)).toEqual([]);
      // /status counts them (mcp-access §6.7): one live grant now, no subject, no product.
      const status = (await request(backend.server).get('/api/mcp-broker/status')).body;
      expect(status.accessGrants).toMatchObject({
        sources: ['portal'],
        live: 1,
        stale: false,
        freshAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
      expect(status.accessGrants.revision).toBeGreaterThanOrEqual(3);
      expect(JSON.stringify(status.accessGrants)).not.toMatch(/alice|key-uid/i);
    } finally {
      await backend.stop();
      await example.close();
    }
  }, 30_000);

  it('names the grant whose plan admitted a call, and the grant whose plan refused one, in the audit trail', async () => {
    const example = await startExampleMcpServer({ port: 0 });
    const { source, writer } = recordingSource('portal');
    const audit: Array<{ meta: Record<string, unknown>; end?: Record<string, unknown> }> = [];
    const auditor = mockServices.auditor.mock({
      async createEvent(options) {
        const event: (typeof audit)[number] = { meta: { ...(options.meta as object) } };
        audit.push(event);
        return {
          async success(done) {
            event.end = { ...(done?.meta as object) };
          },
          async fail(failed) {
            event.end = { ...(failed.meta as object) };
          },
        };
      },
    });
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        sourceModule('test-grants', source),
        auditor.factory,
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [{ name: 'example', url: example.url }] } },
        }),
      ],
    });
    const alice = mockCredentials.user.header('user:default/alice');
    const post = (body: unknown, sessionId?: string) => {
      const call = request(backend.server)
        .post('/api/mcp-broker/mcp')
        .set('Authorization', alice)
        .set('Content-Type', 'application/json')
        .set('Accept', 'application/json, text/event-stream');
      if (sessionId !== undefined) call.set('Mcp-Session-Id', sessionId);
      return call.send(JSON.stringify(body));
    };
    const echo = (id: number, sessionId: string) =>
      post(
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'example_echo', arguments: { message: 'hi' } },
        },
        sessionId,
      );
    try {
      await (await writer).upsert([{ ...grant, limits: [{ calls: 1, windowMs: 86_400_000 }] }]);
      await waitFor(
        async () =>
          (await request(backend.server).get('/api/mcp-broker/status')).body.backends?.[0]
            ?.state === 'connected',
      );
      const init = await post(initializeRequest());
      expect(init.status).toBe(200);
      const sessionId = init.headers['mcp-session-id'];

      expect((await echo(3, sessionId)).status).toBe(200);
      expect((await echo(4, sessionId)).status).toBe(429);

      const calls = audit.filter(event => event.meta.tool === 'echo');
      expect(calls).toHaveLength(2);
      expect(calls[0].meta).toMatchObject({
        principal: 'user:default/alice',
        grant: 'portal:key-uid-1',
      });
      expect(calls[1]).toMatchObject({
        meta: { principal: 'user:default/alice' },
        end: { outcome: 'rate-limited', grant: 'portal:key-uid-1' },
      });
      // An admitted call's event names the grant only, never its product or plan.
      expect(JSON.stringify(calls[0])).not.toMatch(/bronze|example-tools|Example tools/);
    } finally {
      await backend.stop();
      await example.close();
    }
  }, 30_000);
});
