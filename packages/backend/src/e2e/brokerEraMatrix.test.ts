/*
 * Every client era × every backend era through the real backend process (issue #18, spec §3,
 * §9): the official SDK 1.x client (2025-11-25) and SDK v2 client (2026-07-28) against the
 * legacy example server (SDK 1.x, sessions) and the modern one (SDK v2, modern-only), one table:
 * list, call with progress, elicitation (a legacy client is asked on its call's stream, a modern
 * client gets `input_required` and retries), change events (a tool added at the backend reaches
 * a legacy client's GET stream and a modern client's `subscriptions/listen` stream) and
 * cancellation (seen by the backend: a legacy backend's call is aborted by
 * `notifications/cancelled`, a modern backend's call stream closes).
 *
 * Then a backend that changes era across restarts at one URL (legacy → modern → legacy, child
 * processes on a handed-over port): the broker finds the new era (/status), and clients of both
 * eras that stay connected keep listing and calling it and hear its changes again.
 */
import type { ChildServer } from '@internal/test-mcp-backends';
// eslint-disable-next-line @backstage/no-forbidden-package-imports -- the broker's test helper
import { startExampleServerProcess } from '@devportal/plugin-mcp-broker-backend/src/backend/__testUtils__/exampleServerProcess';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerBackendStatus, brokerStatus, waitFor } from './brokerTestKit';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import {
  connectEraClient,
  Era,
  EraClient,
  ERA_COMBINATIONS,
  ERAS,
} from './__testUtils__/eraClients';
import { EraBackend, eraBackends, expectCancelReachesBackend } from './__testUtils__/eraBackends';

const uniqueName = (label: string) => `${label}_${Date.now().toString(36)}`;

describe('every client era × every backend era through the broker (real backend process)', () => {
  let fleet: ExampleFleet;
  let switching: ChildServer;
  let backend: BackendProcess;
  let carol: string;
  const clients: EraClient[] = [];
  let backends: Record<Era, EraBackend>;

  async function status(): Promise<BrokerBackendStatus[]> {
    return (await brokerStatus(backend.baseUrl, carol)).backends;
  }

  async function connect(era: Era): Promise<EraClient> {
    const client = await connectEraClient(era, backend.baseUrl, carol);
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    fleet = await startExampleFleet();
    switching = await startExampleServerProcess('legacy');
    backends = eraBackends(fleet);
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [...fleet.servers, { name: 'switching', url: switching.url }],
          reconnect: { initialDelay: { milliseconds: 100 }, maxDelay: { seconds: 1 } },
          coalesceWindow: { milliseconds: 0 },
        },
      },
    });
    // Carol (portal-admin) may use every tool: this is about eras, not access control.
    carol = await backend.signIn('carol');
    await waitFor(
      async () => (await status()).every(b => b.state === 'connected' && b.eventStream === 'open'),
      30_000,
      'every backend to connect with its event stream',
    );
  }, 120_000);

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
  });

  afterAll(async () => {
    await backend?.stop();
    await fleet?.close();
    await switching?.kill();
  }, 30_000);

  describe.each(ERA_COMBINATIONS)('a %s client × a %s backend', (clientEra, backendEra) => {
    const target = () => backends[backendEra];
    const tool = (name: string) => `${target().name}_${name}`;

    it('lists the backend’s tools and calls one with progress', async () => {
      const client = await connect(clientEra);
      expect(await client.toolNames()).toEqual(
        expect.arrayContaining([tool('echo'), tool('count'), tool('confirm')]),
      );
      const result = await client.callTool(tool('count'), { steps: 3, delayMs: 10 });
      expect(result).toEqual({ text: 'counted to 3', progress: [1, 2, 3] });
    }, 30_000);

    it('relays the backend’s elicitation and returns the answer to the backend', async () => {
      const client = await connect(clientEra);
      const result = await client.callTool(tool('confirm'), target().confirmArgs('Deploy?'));
      expect(client.elicitations).toEqual([expect.objectContaining({ message: 'Deploy?' })]);
      expect(result.text).toBe(target().confirmedText);
    }, 30_000);

    it('tells the client when a tool is added at the backend', async () => {
      const client = await connect(clientEra);
      await client.listenForChanges();
      const added = uniqueName(`${clientEra}_client`);
      target().addTool(added);
      await waitFor(
        () => client.notifications.includes('notifications/tools/list_changed'),
        10_000,
        'tools/list_changed at the client',
      );
      // The broker refreshes its list before it tells anyone.
      expect(await client.toolNames()).toContain(tool(added));
    }, 30_000);

    it('cancels a call at the backend when the client cancels it', async () => {
      await expectCancelReachesBackend(await connect(clientEra), target());
    }, 30_000);
  });

  describe('a backend that changes era across restarts at one URL', () => {
    const eraOfSwitching = async () => (await status()).find(b => b.name === 'switching')!;

    /** Waits until the broker is connected to the switching backend in `era`, events and all. */
    async function waitForEra(era: Era): Promise<BrokerBackendStatus> {
      const connected = await waitFor(
        async () => {
          const s = await eraOfSwitching();
          return s.state === 'connected' && s.era === era && s.eventStream === 'open'
            ? s
            : undefined;
        },
        30_000,
        `the ${era} era on /status`,
      );
      return connected!;
    }

    /** Restarts the switching backend as `era` on its port. */
    async function restartAs(era: Era) {
      const port = switching.port;
      await switching.kill();
      await waitFor(
        async () => (await eraOfSwitching()).state !== 'connected',
        10_000,
        'the broker to notice the drop',
      );
      switching = await startExampleServerProcess(era, port);
    }

    /**
     * Each client still lists and calls the backend (its tool list shows the era: only the
     * legacy server has `remove_tool`) and hears a tool added there after the restart.
     */
    async function expectServed(connected: EraClient[], era: Era) {
      for (const client of connected) {
        await waitFor(
          async () =>
            (await client.toolNames()).includes('switching_remove_tool') === (era === 'legacy'),
          10_000,
          `${client.era} client to list the ${era} tools`,
        );
        const echoed = await client.callTool('switching_echo', { message: `${era} hi` });
        expect(echoed.text).toBe(`${era} hi`);
      }
      const changesBefore = connected.map(client => client.notifications.length);
      const added = uniqueName(`after_${era}`);
      const result = await connected[0].callTool('switching_add_tool', { name: added });
      expect(result.text).toBe(`added ${added}`);
      for (const [i, client] of connected.entries()) {
        await waitFor(
          async () =>
            client.notifications.length > changesBefore[i] &&
            (await client.toolNames()).includes(`switching_${added}`),
          10_000,
          `${client.era} client to hear of switching_${added}`,
        );
      }
    }

    it('is found in its new era, and clients that stay connected keep using it', async () => {
      const first = await waitForEra('legacy');
      const connected = await Promise.all(ERAS.map(connect));
      await Promise.all(connected.map(client => client.listenForChanges()));
      await expectServed(connected, 'legacy');

      await restartAs('modern');
      const second = await waitForEra('modern');
      expect(second.eraDetectedAt! > first.eraDetectedAt!).toBe(true);
      await expectServed(connected, 'modern');

      await restartAs('legacy');
      const third = await waitForEra('legacy');
      expect(third.eraDetectedAt! > second.eraDetectedAt!).toBe(true);
      await expectServed(connected, 'legacy');
    }, 120_000);
  });
});
