/*
 * Rotation of the broker's own keys without downtime (spec §11.1; the procedure in
 * docs/deployment.md, "The broker's keys", followed step by step): two real backend processes on
 * one PostgreSQL database, whose wall clocks the test moves forward (advancingClock) instead of
 * waiting for `keyRotation.signingKeyMaxAge`.
 * - A subject token signed before the rotation still verifies after it, against the JWK Set either
 *   replica serves and at the real RFC 8693 server of our test packages; once every token of the
 *   old key has expired, the key is gone from the JWK Set and that server refuses the token.
 * - A requestState sealed before the rotation still opens (the held call completes); the old
 *   HMAC key is removed once `elicitationTtl` has passed.
 * - The database never holds a key in the clear (its rows are read directly).
 * The token endpoint is reached through a tap that records the subject tokens the broker sends
 * (the server itself records no token), and forwards everything unchanged.
 *
 * Runs only with PostgreSQL (see __testUtils__/replicas.ts).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  RawMcpBackend,
  signedByJwks,
  startRawMcpBackend,
  startTokenExchangeServer,
  startWhoamiServer,
  type TokenExchangeServer,
  type WhoamiServer,
} from '@internal/test-mcp-backends';
import { PgClient } from '../testing/backendDatabases';
import type { BackendProcess } from '../testing/startBackendProcess';
import { connectBrokerClient, waitFor } from './brokerTestKit';
import { modernToolCall } from './__testUtils__/modernBrokerClient';
import {
  describeSkippedWithoutPostgres,
  replicaDatabase,
  startReplicas,
} from './__testUtils__/replicas';

const PURPOSE = 'key rotation across replicas (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** keyRotation of the replicas: both keys due after 10 minutes, re-read every second. */
const MAX_AGE_MS = 10 * MINUTE;
const CHECK_INTERVAL_MS = SECOND;
const CLOCK_SKEW_MS = SECOND;
const ELICITATION_TTL_MS = 60 * MINUTE;
/** A new signing key is published this long before it signs: the JWKS cache time + 2 checks. */
const SIGNING_PUBLISH_AHEAD_MS = 300 * SECOND + 2 * CHECK_INTERVAL_MS;
/** An old signing key stays this long after its successor activated: token lifetime + skew + check. */
const SIGNING_RETAIN_MS = 120 * SECOND + CLOCK_SKEW_MS + CHECK_INTERVAL_MS;
/** An old requestState key stays this long after its successor activated. */
const HMAC_RETAIN_MS = ELICITATION_TTL_MS + CLOCK_SKEW_MS + CHECK_INTERVAL_MS;

interface Jwks {
  keys: Array<{ kid: string; [member: string]: unknown }>;
}

const kidOf = (token: string): string =>
  JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid;

/** Forwards token requests to `target`, recording each `subject_token`. */
async function startTokenTap(target: string) {
  const subjectTokens: string[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const subject = new URLSearchParams(body).get('subject_token');
    if (subject !== null) subjectTokens.push(subject);
    const answer = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': req.headers['content-type'] ?? 'application/x-www-form-urlencoded',
        ...(req.headers.authorization && { authorization: req.headers.authorization }),
      },
      body,
    });
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(await answer.text());
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    subjectTokens,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (postgres === undefined) {
  describeSkippedWithoutPostgres(PURPOSE);
} else {
  describe('rotating the broker’s keys on two replicas', () => {
    let replicas: BackendProcess[] = [];
    let sts: TokenExchangeServer;
    let tap: Awaited<ReturnType<typeof startTokenTap>>;
    let whoami: WhoamiServer;
    let raw: RawMcpBackend;
    const closers: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      sts = await startTokenExchangeServer({
        clients: { 'mcp-broker': 'exchange-secret' },
        trustedIssuers: [],
        allowedTargets: ['whoami'],
      });
      tap = await startTokenTap(sts.tokenEndpoint);
      whoami = await startWhoamiServer({
        era: 'legacy',
        brokerToken: 'broker-own',
        jwt: { jwksUrl: sts.jwksUrl, issuer: sts.issuer, audience: 'whoami' },
      });
      raw = await startRawMcpBackend();
      // Step 1 of the procedure: a key-encryption key shared by every replica, and the schedule.
      const config = {
        permission: { enabled: false },
        mcpBroker: {
          sessionStore: 'database',
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          elicitationTtl: { milliseconds: ELICITATION_TTL_MS },
          keyRotation: {
            signingKeyMaxAge: { milliseconds: MAX_AGE_MS },
            requestStateKeyMaxAge: { milliseconds: MAX_AGE_MS },
            checkInterval: { milliseconds: CHECK_INTERVAL_MS },
            clockSkew: { milliseconds: CLOCK_SKEW_MS },
          },
          servers: [
            {
              name: 'whoami',
              url: whoami.url,
              headers: { Authorization: 'Bearer broker-own' },
              auth: {
                mode: 'tokenExchange',
                tokenEndpoint: tap.url,
                clientId: 'mcp-broker',
                clientSecret: 'exchange-secret',
                audience: 'whoami',
                // What the real server expects (the tap forwards to it).
                subjectTokenAudience: sts.tokenEndpoint,
              },
            },
            { name: 'raw', url: raw.url },
          ],
        },
      };
      // A generous start limit: two backends start one after the other on a shared machine.
      replicas = await startReplicas(postgres, config, 2, {
        advancingClock: true,
        startTimeoutMs: 200_000,
      });
      for (const replica of replicas) trustBroker(replica);
    }, 450_000);

    afterAll(async () => {
      for (const close of closers) await close();
      await Promise.all(replicas.map(r => r.stop()));
      await Promise.all([sts, tap, whoami, raw].map(s => s?.close()));
      await postgres.cleanup();
    }, 60_000);

    /** The real token server trusts the broker behind `replica`; a new trust refetches its JWKS. */
    function trustBroker(replica: BackendProcess) {
      sts.trust({
        issuer: `${replica.baseUrl}/api/mcp-broker`,
        jwksUrl: `${replica.baseUrl}/api/mcp-broker/.well-known/jwks.json`,
      });
    }

    /** How far the replicas' clocks were moved so far. */
    let advanced = 0;
    /**
     * Moves every replica's clock `ms` forward, then waits until each has marked itself present
     * on its new clock (replicas/ReplicaPresence.ts: a mark of the old clock reads as lapsed,
     * and a held call's replica would count as gone until its next beat).
     */
    const advanceClocks = async (ms: number) => {
      await Promise.all(replicas.map(r => r.advanceClock(ms)));
      advanced += ms;
      await waitFor(
        async () => {
          const present = await brokerRows<{ n: string }>(
            'SELECT count(*) AS n FROM mcp_broker_replicas WHERE alive_until > $1',
            [Date.now() + advanced],
          );
          return Number(present[0].n) >= replicas.length;
        },
        30_000,
        'every replica present on its moved clock',
      );
    };

    async function jwks(replica: BackendProcess): Promise<Jwks> {
      const response = await fetch(`${replica.baseUrl}/api/mcp-broker/.well-known/jwks.json`);
      expect(response.status).toBe(200);
      return (await response.json()) as Jwks;
    }

    /** Rows of one query on the broker's database. */
    async function brokerRows<Row extends Record<string, any>>(
      text: string,
      values: unknown[] = [],
    ): Promise<Row[]> {
      const connection = postgres!.config!.connection as Record<string, unknown>;
      const prefix = postgres!.config!.prefix as string;
      const pg = new PgClient({ ...connection, database: `${prefix}mcp-broker` });
      await pg.connect();
      try {
        return (await pg.query<Row>(text, values)).rows;
      } finally {
        await pg.end();
      }
    }

    /** The key ring's rows, read directly from the broker's database. */
    async function keyRows() {
      return brokerRows('SELECT * FROM mcp_broker_key_ring ORDER BY purpose, generation');
    }

    /** One token exchange through `replica` for `user`; resolves with the subject token sent. */
    async function exchangeThrough(replica: BackendProcess, user: string): Promise<string> {
      const client = await connectBrokerClient(replica.baseUrl, await replica.signIn(user));
      closers.push(() => client.close());
      await waitFor(
        async () => (await client.client.listTools()).tools.some(t => t.name === 'whoami_whoami'),
        30_000,
        'the whoami server listed',
      );
      const before = tap.subjectTokens.length;
      const result: any = await client.client.callTool({ name: 'whoami_whoami' });
      expect(JSON.parse(result.content[0].text)).toMatchObject({ sub: `user:default/${user}` });
      expect(tap.subjectTokens.length).toBe(before + 1);
      return tap.subjectTokens[before];
    }

    /** The real token server's verdict on a subject token (it verifies it with the broker's JWKS). */
    async function serverAccepts(subjectToken: string): Promise<number> {
      const response = await fetch(sts.tokenEndpoint, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('mcp-broker:exchange-secret').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: subjectToken,
          subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
          audience: 'whoami',
        }),
      });
      return response.status;
    }

    it('keeps tokens and requestStates of the old keys good until they expired, then drops the keys, and stores none in the clear', async () => {
      const [first, second] = replicas;
      const alice = await second.signIn('alice');
      const before = await exchangeThrough(first, 'alice');
      const ask = { name: 'raw_elicit', arguments: { id: '"before-rotation"' } };
      const asked = await modernToolCall(second.baseUrl, alice, 1, ask, {
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      });
      expect(asked.response.result).toMatchObject({ resultType: 'input_required' });
      const stateBefore = asked.response.result.requestState as string;
      const oldKeys = await keyRows();
      expect(oldKeys.map(r => [r.purpose, r.generation])).toEqual([
        ['request-state', 1],
        ['subject-token', 1],
      ]);

      // Step 2: the schedule makes a new key on whichever replica notices first, published ahead.
      await advanceClocks(MAX_AGE_MS + SECOND);
      await waitFor(
        async () => (await jwks(first)).keys.length === 2 && (await jwks(second)).keys.length === 2,
        30_000,
        'the next signing key published by both replicas',
      );
      expect((await keyRows()).map(r => [r.purpose, r.generation])).toEqual([
        ['request-state', 1],
        ['request-state', 2],
        ['subject-token', 1],
        ['subject-token', 2],
      ]);
      // Published, not yet signing: a verifier's cached JWK Set learns the key first.
      expect(kidOf(await exchangeThrough(second, 'carol'))).toBe(kidOf(before));

      // Step 3: once published long enough, the new key signs; the old token still verifies.
      await advanceClocks(SIGNING_PUBLISH_AHEAD_MS + SECOND);
      const after = await exchangeThrough(second, 'alice');
      expect(kidOf(after)).not.toBe(kidOf(before));
      for (const replica of replicas) {
        const set = await jwks(replica);
        expect(await signedByJwks(before, set)).toBe(true);
        expect(await signedByJwks(after, set)).toBe(true);
      }
      expect(await serverAccepts(before)).toBe(200);
      // The requestState sealed before the rotation opens, on the other replica: the call ends.
      const answered = await modernToolCall(
        first.baseUrl,
        alice,
        2,
        {
          ...ask,
          requestState: stateBefore,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
        },
        { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
      );
      expect(answered.response.result).toMatchObject({
        resultType: 'complete',
        structuredContent: { receivedId: '"before-rotation"' },
      });

      // Step 4: after the old key's tokens expired, the key leaves the JWK Set on both replicas.
      await advanceClocks(SIGNING_RETAIN_MS + SECOND);
      await waitFor(
        async () =>
          (await Promise.all(replicas.map(jwks))).every(
            set => set.keys.length === 1 && set.keys[0].kid === kidOf(after),
          ),
        30_000,
        'the old signing key removed from both replicas',
      );
      expect(await signedByJwks(before, await jwks(first))).toBe(false);
      // A verifier fetching the JWK Set now refuses the old token (and still takes the new key).
      for (const replica of replicas) trustBroker(replica);
      expect(await serverAccepts(before)).toBe(400);
      expect(await serverAccepts(after)).toBe(200);

      // The old requestState key goes once every state it sealed has expired (meanwhile the next
      // rotations are due: generation 3 of each key exists by now).
      await advanceClocks(HMAC_RETAIN_MS + SECOND);
      const hmacGenerations = async () =>
        (await keyRows()).filter(r => r.purpose === 'request-state').map(r => r.generation);
      await waitFor(
        async () => !(await hmacGenerations()).includes(1),
        30_000,
        'the old requestState key removed',
      );
      expect(await hmacGenerations()).toEqual([2, 3]);

      // The database never held a key in the clear.
      const rows = [...oldKeys, ...(await keyRows())];
      for (const row of rows) {
        expect(row.plaintext).toBeNull();
        expect(row.kek_id).toMatch(/^[0-9a-f]{16}$/);
        expect(row.ciphertext).toEqual(expect.any(String));
      }
      const pems = rows.map(r => r.ciphertext as string).join();
      expect(pems).not.toContain('"d":');
    }, 180_000);
  });
}
