/* The plugin's wiring in a test backend (startTestBackend: auth is mocked there). */
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { startUnreachableServer } from '@internal/test-mcp-backends';
import { startScriptedMcpServer } from './testing/scriptedMcpServer';
import { switchablePermissions } from './__testUtils__/switchablePermissions';
import { waitFor } from './testing/waitFor';
import { initializeRequest } from './testing/initializeRequest';

/** The plugin alone in a test backend, with this `mcpBroker` configuration. */
async function startBroker(mcpBroker: JsonObject) {
  const { server } = await startTestBackend({
    features: [mcpBrokerPlugin, mockServices.rootConfig.factory({ data: { mcpBroker } })],
  });
  return server;
}

describe('mcpBrokerPlugin (startTestBackend, mocked auth)', () => {
  it('fails start-up with a message naming the invalid key', async () => {
    await expect(
      startTestBackend({
        features: [
          mcpBrokerPlugin,
          mockServices.rootConfig.factory({
            data: {
              mcpBroker: {
                servers: [
                  { name: 'ok', url: 'http://x/mcp' },
                  { name: 'Not OK', url: 'http://x/mcp' },
                ],
              },
            },
          }),
        ],
      }),
    ).rejects.toThrow(/mcpBroker\.servers\[1\]\.name/);
  });

  it('serves the status of configured servers to authenticated callers only', async () => {
    const nowhere = await startUnreachableServer();
    const server = await startBroker({
      servers: [{ name: 'nowhere', url: nowhere.url, headers: { Authorization: 'Bearer sekrit' } }],
      reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 100 } },
    });
    try {
      const anonymous = await request(server)
        .get('/api/mcp-broker/status')
        .set('Authorization', mockCredentials.none.header());
      expect(anonymous.status).toBe(401);
      const response = await request(server).get('/api/mcp-broker/status');
      expect(response.status).toBe(200);
      expect(response.body.backends).toEqual([
        expect.objectContaining({ name: 'nowhere', url: nowhere.url }),
      ]);
      expect(['connecting', 'backing-off']).toContain(response.body.backends[0].state);
      expect(JSON.stringify(response.body)).not.toContain('sekrit');
      const health = await request(server)
        .get('/api/mcp-broker/health')
        .set('Authorization', mockCredentials.none.header());
      expect(health.status).toBe(200);
    } finally {
      await server.stop?.();
      await nowhere.close();
    }
  });
});

describe('a backend whose GET stream never sends headers (startTestBackend, a scripted backend)', () => {
  it('shows the stream opening, then backing off with the deadline in lastError, and retries it until it opens', async () => {
    const silent = await startScriptedMcpServer({ holdEventStreams: true });
    const server = await startBroker({
      servers: [{ name: 'silent', url: silent.url }],
      // requestTimeout stays at its 30 s default: only the new deadline can end a wait.
      eventStreamOpenTimeout: { milliseconds: 300 },
      reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
    });
    const statusOf = async () => {
      const response = await request(server).get('/api/mcp-broker/status');
      expect(response.status).toBe(200);
      return response.body.backends.find((b: { name: string }) => b.name === 'silent');
    };
    const missed = 'backend silent: the event stream did not open within 300 ms';
    try {
      const backingOff = await waitFor(async () => {
        const status = await statusOf();
        return status.state === 'backing-off' && status;
      }, 'the first attempt to give up on the stream');
      expect(backingOff).toMatchObject({
        eventStream: 'down',
        lastError: missed,
        nextRetryAt: expect.any(String),
        consecutiveFailures: expect.any(Number),
        counts: expect.objectContaining({ tools: 1 }), // the lists were read before the GET
      });
      // The retry: connected (lists re-read), the stream opening, the last error still shown.
      const retrying = await waitFor(async () => {
        const status = await statusOf();
        return status.state === 'connected' && status.eventStream === 'opening' && status;
      }, 'a retry waiting for the stream');
      expect(retrying).toMatchObject({ lastError: missed });
      await waitFor(
        async () => (await statusOf()).consecutiveFailures >= 3,
        'three attempts whose stream did not open',
      );
      expect(silent.eventStreamsHeld()).toBeGreaterThanOrEqual(3);
      expect(silent.initializeCount()).toBe(1); // the session stays; only the stream is retried

      silent.holdEventStreams = false;
      const open = await waitFor(async () => {
        const status = await statusOf();
        return status.state === 'connected' && status.eventStream === 'open' && status;
      }, 'the stream open once the backend answers');
      expect(open.lastError).toBeUndefined();
    } finally {
      await server.stop?.();
      await silent.close();
    }
  });
});

describe('mcpBrokerPlugin permissions (startTestBackend, mocked auth, a permissions test double)', () => {
  const initialize = initializeRequest();

  it('fails closed with 503 while the permission backend cannot be asked, then recovers', async () => {
    let available = false;
    const flaky = switchablePermissions(() => available);
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        flaky,
        mockServices.rootConfig.factory({ data: { mcpBroker: { servers: [] } } }),
      ],
    });
    try {
      const post = () =>
        request(server)
          .post('/api/mcp-broker/mcp')
          .set('Content-Type', 'application/json')
          .set('Accept', 'application/json, text/event-stream')
          .send(JSON.stringify(initialize));
      const refused = await post();
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        error: { message: expect.stringMatching(/retry/) },
      });
      expect(JSON.stringify(refused.body)).not.toContain('ECONNREFUSED');
      expect((await request(server).get('/api/mcp-broker/status')).status).toBe(503);
      available = true;
      expect((await post()).status).toBe(200);
    } finally {
      await server.stop?.();
    }
  });
});

describe('mcpBrokerPlugin with a reloaded configuration (startTestBackend, mocked auth, real scripted servers)', () => {
  it('connects added servers and drops removed ones when the configuration changes', async () => {
    const first = await startScriptedMcpServer({ tools: ['one'] });
    const second = await startScriptedMcpServer({ tools: ['two'] });
    const server = (name: string, url: string) => ({ name, url });
    const rootConfig = mockServices.rootConfig({
      data: {
        mcpBroker: {
          servers: [server('first', first.url)],
          reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 100 } },
        },
      },
    });
    const { server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
      ],
    });
    const states = async () =>
      Object.fromEntries(
        (
          (await request(http).get('/api/mcp-broker/status')).body.backends as Array<{
            name: string;
            state: string;
          }>
        ).map(b => [b.name, b.state]),
      );
    try {
      await waitFor(async () => (await states()).first === 'connected');
      rootConfig.update({ data: { mcpBroker: { servers: [server('second', second.url)] } } });
      await waitFor(
        async () => JSON.stringify(await states()) === JSON.stringify({ second: 'connected' }),
      );
      await waitFor(async () => first.openEventStreams() === 0, "first's event stream closed");
      // "connected" is reported once initialize has answered; the event stream opens after it.
      await waitFor(() => second.openEventStreams() === 1, "second's event stream");

      // Subscribers run inside update(): when it returns, the reload has been refused or applied
      // (an applied one would already have dropped "second" from the set).
      rootConfig.update({ data: { mcpBroker: { servers: [server('Bad Name', second.url)] } } });
      expect(await states()).toEqual({ second: 'connected' });
    } finally {
      await http.stop?.();
      await first.close();
      await second.close();
    }
  }, 20_000);
});
