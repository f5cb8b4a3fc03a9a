/*
 * Every client era × every backend era behind two replicas (spec §6, §9; issue #18): two real
 * backend processes on one PostgreSQL database, each with its own connections to the legacy
 * example server (SDK 1.x, sessions) and the modern one (SDK v2, modern-only), used by clients
 * of both eras (SDK 1.x and SDK v2 pinned to 2026-07-28) that address a replica directly. One
 * table (clients from __testUtils__/eraClients.ts, backends from __testUtils__/eraBackends.ts):
 * - list and call with progress on both replicas;
 * - elicitation raised by a call on replica A and answered through replica B (legacy client: the
 *   answer POSTed to B; modern client: the `input_required` retry sent to B, which resumes the
 *   call A holds for a legacy backend, and is a stateless call for a modern one);
 * - a tool added at the backend reaches the client on either replica exactly once (each replica
 *   has its own event channel to the backend: a GET stream, or a `subscriptions/listen`);
 * - a call cancelled on replica B is cancelled at the backend.
 *
 * Runs only with PostgreSQL (see __testUtils__/replicas.ts).
 */
import { randomBytes } from 'node:crypto';
import { BackendProcess } from '../testing/startBackendProcess';
import { passMarker, waitFor } from './brokerTestKit';
import {
  connectEraClient,
  Era,
  EraClient,
  EraClientOptions,
  ERA_COMBINATIONS,
  ERAS,
} from './__testUtils__/eraClients';
import { EraBackend, eraBackends, expectCancelReachesBackend } from './__testUtils__/eraBackends';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import {
  describeSkippedWithoutPostgres,
  replicaDatabase,
  startReplicas,
} from './__testUtils__/replicas';

const PURPOSE = 'mixed-era multi-replica tests (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);
const CHANGED = 'notifications/tools/list_changed';

if (postgres === undefined) {
  describeSkippedWithoutPostgres(PURPOSE);
} else {
  describe('every client era × every backend era on two replicas', () => {
    let fleet: ExampleFleet;
    let backends: Record<Era, EraBackend>;
    let replicas: BackendProcess[] = [];
    let carol: string;
    const clients: EraClient[] = [];

    async function connect(
      era: Era,
      replica: BackendProcess,
      options?: EraClientOptions,
    ): Promise<EraClient> {
      const client = await connectEraClient(era, replica.baseUrl, carol, options);
      clients.push(client);
      return client;
    }

    /** Whether a new client of `era` on `replica` gets every backend's `confirm` listed. */
    async function listsEveryBackend(era: Era, replica: BackendProcess): Promise<boolean> {
      const client = await connectEraClient(era, replica.baseUrl, carol).catch(() => undefined);
      if (client === undefined) return false;
      try {
        const names = await client.toolNames();
        return ERAS.every(b => names.includes(`${backends[b].name}_confirm`));
      } catch {
        return false;
      } finally {
        await client.close();
      }
    }

    beforeAll(async () => {
      fleet = await startExampleFleet();
      backends = eraBackends(fleet);
      replicas = await startReplicas(postgres, {
        mcpBroker: {
          sessionStore: 'database',
          // The replicas share the broker's keys, kept in the database sealed with this key.
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          servers: fleet.servers,
          // No coalescing: the marker of the exactly-once test is not overtaken.
          coalesceWindow: { milliseconds: 0 },
        },
      });
      // Signing keys live in the shared auth database: a token from one replica works on both.
      // Carol (portal-admin) may use every tool: this is about replicas and eras, not access.
      carol = await replicas[0].signIn('carol');
      // Each replica keeps its own event channel to each backend.
      await waitFor(
        () => ERAS.every(era => backends[era].eventChannels() === replicas.length),
        30_000,
        'both replicas’ event channels to every backend',
      );
      // Start-up is over once each replica lists every backend to clients of both eras (a
      // replica may refuse a request while it is still starting).
      for (const replica of replicas) {
        for (const era of ERAS) {
          await waitFor(
            () => listsEveryBackend(era, replica),
            30_000,
            `${era} client lists every backend on a replica`,
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

    describe.each(ERA_COMBINATIONS)('a %s client × a %s backend', (clientEra, backendEra) => {
      const target = () => backends[backendEra];
      const tool = (name: string) => `${target().name}_${name}`;

      it('lists the backend’s tools and calls one with progress on both replicas', async () => {
        for (const replica of replicas) {
          const client = await connect(clientEra, replica);
          expect(await client.toolNames()).toEqual(
            expect.arrayContaining([tool('count'), tool('confirm')]),
          );
          const result = await client.callTool(tool('count'), { steps: 3, delayMs: 10 });
          expect(result).toEqual({ text: 'counted to 3', progress: [1, 2, 3] });
        }
      }, 60_000);

      it('relays an elicitation of a call on replica A answered through replica B', async () => {
        const [a, b] = replicas;
        const client = await connect(clientEra, a, { answersTo: b.baseUrl });
        const result = await client.callTool(tool('confirm'), target().confirmArgs('Ship it?'));
        // A legacy answer's 202 from B may arrive after the call's result from A.
        await waitFor(() => client.answers.length > 0, 10_000, 'the answer’s response');
        // Legacy: B took the answer POST (202) and handed it to A; modern: B served the retry.
        // One expectation, so that a failure shows the whole exchange.
        expect({
          asked: client.elicitations,
          text: result.text,
          answers: client.answers,
        }).toEqual({
          asked: [expect.objectContaining({ message: 'Ship it?' })],
          text: target().confirmedText,
          answers: [
            expect.objectContaining({
              baseUrl: b.baseUrl,
              status: clientEra === 'legacy' ? 202 : 200,
            }),
          ],
        });
      }, 60_000);

      it('tells the client on either replica of a tool added at the backend exactly once', async () => {
        const listening = await Promise.all(replicas.map(replica => connect(clientEra, replica)));
        await Promise.all(listening.map(client => client.listenForChanges()));
        const added = `replicas_${clientEra}_${Date.now().toString(36)}`;
        target().addTool(added);
        await waitFor(
          () => listening.every(client => client.notifications.includes(CHANGED)),
          10_000,
          'tools/list_changed at the client on each replica',
        );
        // The marker (prompts/list_changed) travels behind the tools change on both replicas'
        // channels: once it arrived everywhere, no second tools change is on its way.
        await passMarker(listening, () => target().announcePromptsChanged());
        expect(
          listening.map(client => client.notifications.filter(m => m === CHANGED).length),
        ).toEqual([1, 1]);
        for (const client of listening) {
          expect(await client.toolNames()).toContain(tool(added));
        }
      }, 60_000);

      it('cancels a call at the backend when the client on replica B cancels it', async () => {
        await expectCancelReachesBackend(await connect(clientEra, replicas[1]), target());
      }, 60_000);
    });
  });
}
