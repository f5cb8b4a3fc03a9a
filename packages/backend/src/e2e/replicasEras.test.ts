/*
 * A mixed fleet behind two replicas (spec §6, §9): two real backend processes on one PostgreSQL
 * database, each with its own connections to the legacy example server (SDK 1.x) and the modern
 * one (SDK v2, modern-only), used by clients of both eras (SDK 1.x and SDK v2 pinned to
 * 2026-07-28) that address a replica directly. For each client era × the modern backend: lists
 * and calls with progress on both replicas, a change at the modern backend reaches every client
 * on either replica exactly once (each replica has its own `subscriptions/listen` stream to it),
 * and a call cancelled on replica B is cancelled at the backend.
 *
 * Runs only with PostgreSQL (see __testUtils__/replicas.ts).
 */
import { BackendProcess } from '../testing/startBackendProcess';
import { passMarker, waitFor } from './brokerTestKit';
import { connectEraClient, Era, EraClient, ERAS } from './__testUtils__/eraClients';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import { replicaDatabase, startReplicas } from './__testUtils__/replicas';

const PURPOSE = 'mixed-era multi-replica tests (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);

if (postgres === undefined) {
  describe(`${PURPOSE}: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING not set`, () => {
    it('is skipped only because no PostgreSQL server is configured', () => {
      expect(process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING).toBeFalsy();
    });
  });
} else {
  describe('clients of both eras × the modern backend on two replicas', () => {
    let fleet: ExampleFleet;
    let replicas: BackendProcess[] = [];
    let carol: string;
    const clients: EraClient[] = [];

    async function connect(era: Era, replica: BackendProcess): Promise<EraClient> {
      const client = await connectEraClient(era, replica.baseUrl, carol);
      clients.push(client);
      return client;
    }

    /** Whether a new client of `era` on `replica` gets the modern backend's tools listed. */
    async function listsModernBackend(era: Era, replica: BackendProcess): Promise<boolean> {
      const client = await connectEraClient(era, replica.baseUrl, carol).catch(() => undefined);
      if (client === undefined) return false;
      try {
        return (await client.toolNames()).includes('modern_count');
      } catch {
        return false;
      } finally {
        await client.close();
      }
    }

    beforeAll(async () => {
      fleet = await startExampleFleet();
      replicas = await startReplicas(postgres, {
        mcpBroker: {
          sessionStore: 'database',
          servers: fleet.servers,
          // No coalescing: the marker of the exactly-once test is not overtaken.
          coalesceWindow: { milliseconds: 0 },
        },
      });
      // Signing keys live in the shared auth database: a token from one replica works on both.
      // Carol (portal-admin) may use every tool: this is about replicas and eras, not access.
      carol = await replicas[0].signIn('carol');
      // Each replica keeps its own listen stream to the modern backend.
      await waitFor(() => fleet.modern.listenStreams() === 2, 30_000, 'both listen streams');
      // Start-up is over once each replica lists the modern backend to clients of both eras
      // (as in replicas.test.ts; a replica may refuse a request while it is still starting).
      for (const replica of replicas) {
        for (const era of ERAS) {
          await waitFor(
            () => listsModernBackend(era, replica),
            30_000,
            `${era} lists on a replica`,
          );
        }
      }
    }, 180_000);

    afterEach(async () => {
      for (const client of clients.splice(0)) await client.close();
    });

    afterAll(async () => {
      await Promise.all(replicas.map(replica => replica.stop()));
      await fleet?.close();
      await postgres.cleanup();
    }, 60_000);

    it.each(ERAS)(
      'lists and calls the modern backend with progress on both replicas (%s client)',
      async era => {
        for (const replica of replicas) {
          const client = await connect(era, replica);
          expect(await client.toolNames()).toContain('modern_count');
          const result = await client.callTool('modern_count', { steps: 3, delayMs: 10 });
          expect(result).toEqual({ text: 'counted to 3', progress: [1, 2, 3] });
        }
      },
      60_000,
    );

    it('tells every client on either replica of a modern backend’s change exactly once', async () => {
      const listening = await Promise.all(
        replicas.flatMap(replica => ERAS.map(era => connect(era, replica))),
      );
      await Promise.all(listening.map(client => client.listenForChanges()));
      const added = `replicas_${Date.now().toString(36)}`;
      fleet.modern.addTool(added);
      await waitFor(
        () =>
          listening.every(client =>
            client.notifications.includes('notifications/tools/list_changed'),
          ),
        10_000,
        'tools/list_changed at every client',
      );
      // The marker (prompts/list_changed) travels behind the tools change on both replicas'
      // streams: once it arrived everywhere, no second tools change is on its way.
      await passMarker(listening, () => fleet.modern.announcePromptsChanged());
      expect(
        listening.map(
          client =>
            client.notifications.filter(m => m === 'notifications/tools/list_changed').length,
        ),
      ).toEqual([1, 1, 1, 1]);
      for (const client of listening) {
        expect(await client.toolNames()).toContain(`modern_${added}`);
      }
    }, 60_000);

    it.each(ERAS)(
      'cancels a call at the modern backend when a %s client on replica B cancels it',
      async era => {
        const client = await connect(era, replicas[1]);
        const controller = new AbortController();
        let progressed = false;
        const call = client.callTool(
          'modern_count',
          { steps: 1000, delayMs: 20 },
          {
            signal: controller.signal,
            onprogress: () => {
              // The backend call's stream is open while it reports progress.
              progressed = true;
              controller.abort('the user pressed stop');
            },
          },
        );
        await expect(call).rejects.toThrow();
        expect(progressed).toBe(true);
        // 2026-07-28 has no notifications/cancelled: closing the call's stream is the cancel.
        await waitFor(
          () => fleet.modern.openToolCalls() === 0,
          10_000,
          'the backend call’s stream to close',
        );
      },
      60_000,
    );
  });
}
