/* The plugin's wiring in a test backend (startTestBackend: auth is mocked there). */
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';

describe('mcpBrokerPlugin (startTestBackend, mocked auth)', () => {
  it('fails start-up with a message naming the invalid key', async () => {
    await expect(
      startTestBackend({
        features: [
          mcpBrokerPlugin,
          mockServices.rootConfig.factory({
            data: { mcpBroker: { servers: [{ name: 'ok', url: 'http://127.0.0.1:1/mcp' }, { name: 'Not OK', url: 'http://x/mcp' }] } },
          }),
        ],
      }),
    ).rejects.toThrow(/mcpBroker\.servers\[1\]\.name/);
  });

  it('serves the status of configured servers to authenticated callers only', async () => {
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'nowhere', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer sekrit' } }],
              reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 100 } },
            },
          },
        }),
      ],
    });
    try {
      const anonymous = await request(server).get('/api/mcp-broker/status').set('Authorization', mockCredentials.none.header());
      expect(anonymous.status).toBe(401);
      const response = await request(server).get('/api/mcp-broker/status');
      expect(response.status).toBe(200);
      expect(response.body.backends).toEqual([
        expect.objectContaining({ name: 'nowhere', url: 'http://127.0.0.1:9/mcp' }),
      ]);
      expect(['connecting', 'backing-off']).toContain(response.body.backends[0].state);
      expect(JSON.stringify(response.body)).not.toContain('sekrit');
      const health = await request(server).get('/api/mcp-broker/health').set('Authorization', mockCredentials.none.header());
      expect(health.status).toBe(200);
    } finally {
      await server.stop?.();
    }
  });
});
