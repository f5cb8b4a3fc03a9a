/*
 * The broker's key rings on SQLite and PostgreSQL, as two replicas see them (separate connection
 * pools on PostgreSQL), with a clock the test moves: replicas starting together agree on one key
 * per purpose and the rows hold none in the clear; a due rotation adds one generation (however
 * many replicas notice), published before it signs, and the old key is removed only once
 * everything it signed has expired; keys an earlier version stored in the clear are carried over
 * by the migration and sealed at the first start; a change of the key-encryption key re-seals
 * them while replicas with the old configuration keep working.
 */
import { randomBytes } from 'node:crypto';
import { signedByJwks } from '@internal/test-mcp-backends';
import type { Knex } from 'knex';
import { CredentialCipher } from '../identity/CredentialCipher';
import { BrokerKeyError, KeyRing } from '../identity/KeyRing';
import { generateSigningKeyMaterial, SubjectTokenIssuer } from '../identity/SubjectTokenIssuer';
import { DatabaseBrokerKeyStore, KEY_RING_TABLE } from './DatabaseBrokerKeyStore';
import { BROKER_MIGRATIONS, migrateBrokerDatabase } from './migrations';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('broker key ring tests');

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

describe.each(engines)('the broker’s key rings on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const keyA = randomBytes(32);
  const kekA = new CredentialCipher(keyA);
  // The test's clock starts at the real time (the migration dates the keys it carries over so).
  let now = Date.now();
  beforeEach(() => {
    now = Date.now();
  });

  const signingRing = (replica: 0 | 1, cipher: CredentialCipher | undefined = kekA) =>
    new KeyRing({
      purpose: 'subject-token',
      store: new DatabaseBrokerKeyStore(knexes[replica]),
      cipher,
      generate: generateSigningKeyMaterial,
      maxAgeMs: 30 * DAY,
      publishAheadMs: 7 * MINUTE,
      retainMs: 4 * MINUTE,
      now: () => now,
    });

  const rows = () => knexes[0](KEY_RING_TABLE).orderBy(['purpose', 'generation']);

  afterEach(async () => {
    await knexes[0](KEY_RING_TABLE).delete();
  });

  it('gives replicas starting together one key, stored sealed', async () => {
    const rings = [signingRing(0), signingRing(1), signingRing(0), signingRing(1)];
    await Promise.all(rings.map(ring => ring.load()));
    const kids = rings.map(ring => ring.current().kid);
    expect(new Set(kids).size).toBe(1);
    const stored = await rows();
    expect(stored).toHaveLength(1);
    expect(stored[0].plaintext).toBeNull();
    expect(stored[0].kek_id).toBe(kekA.currentKeyId);
    // The private scalar of the key appears nowhere in the table.
    const { d } = JSON.parse(rings[0].current().material);
    expect(JSON.stringify(stored)).not.toContain(d);
  });

  it('rotates once when due: the new key is published first, signs from its activation, and the old one verifies until its tokens expired', async () => {
    const [a, b] = [signingRing(0), signingRing(1)];
    await a.load();
    await b.load();
    const issuers = await Promise.all(
      [a, b].map(keys =>
        SubjectTokenIssuer.create({
          issuer: 'http://broker',
          keys,
          nowSeconds: () => Math.floor(now / 1000),
        }),
      ),
    );
    const before = issuers[0].issue('user:default/alice', 'idp');
    const first = a.current().kid;

    now += 30 * DAY;
    await Promise.all([a.load(), b.load()]);
    expect((await rows()).map(r => r.generation)).toEqual([1, 2]);
    // Published, not yet signing.
    expect(issuers[1].jwks().keys.map(k => k.kid)).toHaveLength(2);
    expect(a.current().kid).toBe(first);

    now += 7 * MINUTE;
    const second = a.current().kid;
    expect(second).not.toBe(first);
    expect(b.current().kid).toBe(second);
    const after = issuers[1].issue('user:default/alice', 'idp');
    // Both tokens verify against the JWK Set either replica serves.
    for (const token of [before, after]) {
      expect(await signedByJwks(token, issuers[0].jwks())).toBe(true);
    }

    now += 4 * MINUTE - 1;
    await a.load();
    expect(issuers[0].jwks().keys).toHaveLength(2);
    now += 1;
    await a.load();
    await b.load();
    expect((await rows()).map(r => r.generation)).toEqual([2]);
    expect(issuers[1].jwks().keys.map(k => k.kid)).toEqual([second]);
    expect(await signedByJwks(before, issuers[1].jwks())).toBe(false);
    expect(await signedByJwks(after, issuers[1].jwks())).toBe(true);
  });

  it('re-seals under a new key-encryption key while replicas with the old configuration keep working', async () => {
    const keyB = randomBytes(32);
    const kekB = new CredentialCipher(keyB);
    await signingRing(0, kekA).load();
    const kid = (await rows())[0].kid;
    // Step 1: every replica learns the new key as a previous one; nothing changes in the rows.
    const step1 = new CredentialCipher(keyA, [keyB]);
    await signingRing(1, step1).load();
    expect((await rows())[0].kek_id).toBe(kekA.currentKeyId);
    // Step 2: the new key becomes current on one replica; it re-seals, the other still opens.
    const step2 = new CredentialCipher(keyB, [keyA]);
    const rotated = signingRing(0, step2);
    await rotated.load();
    expect((await rows())[0].kek_id).toBe(kekB.currentKeyId);
    const stillOld = signingRing(1, step1);
    await stillOld.load();
    expect(stillOld.current().kid).toBe(kid);
    expect(rotated.current().material).toBe(stillOld.current().material);
    // (A step-1 replica re-seals with its own current key: during the rolling update the rows go
    // back and forth, and both configurations open both.) Once every replica runs step 2, their
    // next reload leaves every row sealed with the new key.
    await rotated.load();
    expect((await rows()).map(r => r.kek_id)).toEqual([kekB.currentKeyId]);
    // Step 3: the old key dropped everywhere; a replica with only the old key fails loudly.
    await signingRing(0, kekB).load();
    const wrong = await signingRing(1, kekA)
      .load()
      .catch(error => error);
    expect(wrong).toBeInstanceOf(BrokerKeyError);
    expect(wrong.message).toContain('neither mcpBroker.credentialEncryptionKey');
  });

  it('carries the keys an earlier version stored in the clear over, sealing them at the first start', async () => {
    const knex = knexes[0];
    await rollBackTo(knex, 'mcp_broker_signing_keys');
    const legacyJwk = { ...JSON.parse(generateSigningKeyMaterial()), kid: 'legacy-kid' };
    const legacySecret = randomBytes(32).toString('base64url');
    await knex('mcp_broker_signing_keys').insert({
      kid: 'subject-token',
      private_jwk: JSON.stringify(legacyJwk),
      created_at: now - DAY,
    });
    await knex('mcp_broker_keys').insert({ id: 'request-state', secret: legacySecret });
    await migrateBrokerDatabase(knex);
    now = Date.now();
    expect(await knex.schema.hasTable('mcp_broker_signing_keys')).toBe(false);
    expect((await rows()).map(r => r.plaintext !== null)).toEqual([true, true]);

    const hmac = (replica: 0 | 1) =>
      new KeyRing({
        purpose: 'request-state',
        store: new DatabaseBrokerKeyStore(knexes[replica]),
        cipher: kekA,
        generate: () => randomBytes(32).toString('base64url'),
        maxAgeMs: 30 * DAY,
        publishAheadMs: 2 * MINUTE,
        retainMs: 12 * MINUTE,
        now: () => now,
      });
    const rings = [signingRing(0), signingRing(1), hmac(0), hmac(1)];
    await Promise.all(rings.map(ring => ring.load()));
    expect(rings[1].current()).toMatchObject({ kid: 'legacy-kid', generation: 1 });
    expect(JSON.parse(rings[1].current().material).d).toBe(legacyJwk.d);
    expect(rings[3].current().material).toBe(legacySecret);
    const stored = await rows();
    expect(stored.map(r => [r.generation, r.plaintext, r.kek_id])).toEqual([
      [1, null, kekA.currentKeyId],
      [1, null, kekA.currentKeyId],
    ]);
    expect(JSON.stringify(stored)).not.toContain(legacySecret);
    expect(JSON.stringify(stored)).not.toContain(legacyJwk.d);
  });

  it('migrates down to the earlier tables with keys not yet sealed, and up again', async () => {
    const knex = knexes[0];
    await rollBackTo(knex, 'mcp_broker_signing_keys');
    await knex('mcp_broker_keys').insert({ id: 'request-state', secret: 'legacy-secret' });
    await migrateBrokerDatabase(knex);
    await rollBackTo(knex, 'mcp_broker_keys');
    expect(await knex('mcp_broker_keys').select('id', 'secret')).toEqual([
      { id: 'request-state', secret: 'legacy-secret' },
    ]);
    expect(await knex.schema.hasTable(KEY_RING_TABLE)).toBe(false);
    await migrateBrokerDatabase(knex);
    expect(await knex.schema.hasTable(KEY_RING_TABLE)).toBe(true);
  });
});

/** Rolls the broker's migrations back one by one until `table` exists (an earlier schema). */
async function rollBackTo(knex: Knex, table: string): Promise<void> {
  while (!(await knex.schema.hasTable(table))) await knex.migrate.down(BROKER_MIGRATIONS);
}
