/*
 * A replica that got SIGTERM tells every client when to come back: each 503 it answers carries
 * `Retry-After` (docs/deployment.md, "Stopping"). Backstage stops in order: root before-shutdown
 * hooks (the broker drains there and answers its own 503s), then every plugin's shutdown hooks,
 * then the HTTP server closes. From the second step on, Backstage's own lifecycle middleware
 * refuses every request to a plugin with 503 "Service is shutting down" before the plugin's
 * routes see it — without `Retry-After`, until the development backend's root router added it
 * (http/retryAfterOnUnavailable.ts). That gap lasts as long as the slowest plugin's shutdown;
 * a preload (heldServerStop.cjs) holds the process in it until the test has asked, so the test
 * does not depend on landing a request there by chance.
 */
import path from 'node:path';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { LEGACY_INITIALIZE_REQUEST, mcpRawPost } from '../testing/mcpRawPost';
import { STATIC_SERVICE_TOKEN } from '../testing/portalHttp';

/** Resolves once `condition` holds, checking every 50 ms. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 50));
}

describe('a backend process that received SIGTERM', () => {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: [] } },
      nodeArgs: ['--require', path.join(__dirname, '../testing/heldServerStop.cjs')],
      startTimeoutMs: 280_000,
    });
  }, 320_000);

  afterAll(async () => {
    if (backend) process.kill(backend.pid, 'SIGUSR2');
    await backend?.stop();
  }, 60_000);

  it('answers every request to both plugins after their shutdown hooks with 503 and Retry-After', async () => {
    const alice = await backend.signIn('alice');
    process.kill(backend.pid, 'SIGTERM');
    await until(() => backend.output().includes('held-stop:'));

    const answers = await Promise.all([
      fetch(`${backend.baseUrl}/api/portal/apiproducts`, {
        headers: { Authorization: `Bearer ${alice}` },
      }),
      fetch(`${backend.baseUrl}/api/portal/requests/my`, {
        headers: { Authorization: `Bearer ${alice}` },
      }),
      mcpRawPost(`${backend.baseUrl}/api/mcp-broker/mcp`, alice, LEGACY_INITIALIZE_REQUEST),
      fetch(`${backend.baseUrl}/api/mcp-broker/mcp`, {
        headers: { Authorization: `Bearer ${alice}`, Accept: 'text/event-stream' },
      }),
      fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
        headers: { Authorization: `Bearer ${STATIC_SERVICE_TOKEN}` },
      }),
    ]);
    const seen = await Promise.all(
      answers.map(async answer => ({
        url: new URL(answer.url).pathname,
        status: answer.status,
        retryAfter: answer.headers.get('retry-after'),
        error: ((await answer.json()) as { error?: { name?: string } }).error?.name,
      })),
    );
    // Backstage's lifecycle middleware answered (its error body), and said when to come back.
    expect(seen).toEqual(
      seen.map(({ url }) => ({
        url,
        status: 503,
        retryAfter: '1',
        error: 'ServiceUnavailableError',
      })),
    );
  }, 60_000);
});
