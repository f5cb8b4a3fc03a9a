/*
 * One rate limit held by two backend replicas on one PostgreSQL database
 * (`mcpBroker.sessionStore: database`): a person's calls land on both, concurrently, and
 * together are admitted no more than the limit and no fewer than the stated tolerance
 * (RateLimiter: refusals start no earlier than 90 % of it); another person keeps their own
 * budget. Runs only with PostgreSQL, as the other multi-replica tests.
 */
import { randomBytes } from 'node:crypto';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { BackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';
import { modernToolCall } from './__testUtils__/modernBrokerClient';
import { replicaDatabase, startReplicas } from './__testUtils__/replicas';

const PURPOSE = 'rate limits across replicas (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);
const LIMIT = 40;

if (postgres === undefined) {
  describe(`${PURPOSE}: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING not set`, () => {
    it('is skipped only because no PostgreSQL server is configured', () => {
      expect(process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING).toBeFalsy();
    });
  });
} else {
  describe('a rate limit held by two replicas on one PostgreSQL database', () => {
    let replicas: BackendProcess[] = [];
    let example: ExampleMcpServer;
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      example = await startExampleMcpServer({ port: 0 });
      replicas = await startReplicas(postgres, {
        mcpBroker: {
          sessionStore: 'database',
          // The replicas share the broker's keys, kept in the database sealed with this key.
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          servers: [{ name: 'example', url: example.url }],
          rateLimits: { default: { calls: LIMIT, per: { hours: 1 } } },
        },
      });
      for (const user of ['alice', 'bob']) tokens[user] = await replicas[0].signIn(user);
      for (const replica of replicas) {
        await waitFor(
          async () =>
            (
              await modernToolCall(replica.baseUrl, tokens.bob, 0, {
                name: 'example_echo',
                arguments: { message: 'ready' },
              })
            ).status === 200,
          30_000,
          'the replica to serve example_echo',
        );
      }
    }, 180_000);

    afterAll(async () => {
      await Promise.all(replicas.map(replica => replica.stop()));
      await example?.close();
    }, 30_000);

    it('admits at most the limit across both replicas and at least 90 % of it, for one person, while another keeps their budget', async () => {
      const call = (replica: BackendProcess, user: string, id: number) =>
        modernToolCall(replica.baseUrl, tokens[user], id, {
          name: 'example_echo',
          arguments: { message: 'limited' },
        });
      let admitted = 0;
      const refusals: Array<Record<string, any>> = [];
      // 60 calls, 10 at a time, two of three on the first replica.
      const [first, second] = replicas;
      const aliceCall = (n: number) => call(n % 3 === 2 ? second : first, 'alice', n + 1);
      for (let batch = 0; batch < 6; batch += 1) {
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) => aliceCall(batch * 10 + i)),
        );
        for (const result of results) {
          if (result.status === 200) admitted += 1;
          else refusals.push({ status: result.status, error: result.response.error });
        }
      }
      expect(admitted).toBeLessThanOrEqual(LIMIT);
      expect(admitted).toBeGreaterThanOrEqual(LIMIT * 0.9);
      expect(refusals.length).toBe(60 - admitted);
      for (const refusal of refusals) {
        expect(refusal).toMatchObject({
          status: 429,
          error: { code: -32000, data: { reason: 'rate-limited' } },
        });
      }
      // Bob's budget is his own (bob's warm-up calls counted: two, one per replica).
      const bob = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(replicas[i % 2], 'bob', 100 + i)),
      );
      expect(bob.map(r => r.status)).toEqual(Array(10).fill(200));
    }, 120_000);
  });
}
