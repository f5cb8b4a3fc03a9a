/*
 * Personal credentials on SQLite and PostgreSQL, as two replicas see them (separate connection
 * pools on PostgreSQL): stored on one replica, used on the other; never readable in the table;
 * listed without values; a wrong or missing key fails start-up; a rotation re-encrypts; bound to
 * the server's identity, so a new server under an old name starts empty; the migration that
 * introduced the binding drops the rows stored without one.
 */
import { randomBytes } from 'node:crypto';
import { mockServices } from '@backstage/backend-test-utils';
import {
  CredentialCipher,
  CredentialKeyError,
  credentialKeyId,
} from '../identity/CredentialCipher';
import { PersonalCredentialService } from '../identity/PersonalCredentialService';
import {
  DatabaseCredentialRequestStore,
  DatabasePersonalCredentialStore,
  PERSONAL_CREDENTIALS_TABLE,
} from './DatabasePersonalCredentialStore';
import { BROKER_MIGRATIONS, migrateBrokerDatabase } from './migrations';
import { replicaDatabaseForSuite, replicaDatabases } from './__testUtils__/replicaDatabases';

const { engines } = replicaDatabases('personal credential store tests');
const logger = mockServices.logger.mock();
const alice = 'user:user:default/alice';
const carol = 'user:user:default/carol';

describe.each(engines)('personal credentials on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  /** The identity of the server now configured under each name (serverIdentity.ts). */
  const identities: Record<string, string> = {};
  const serverIdentity = (name: string) => identities[name] ?? `identity-of-${name}`;
  const serviceOn = (replica: 0 | 1, cipher: CredentialCipher | undefined) =>
    PersonalCredentialService.create({
      store: new DatabasePersonalCredentialStore(knexes[replica]),
      cipher,
      serverIdentity,
      logger,
    });

  afterEach(async () => {
    await knexes[0](PERSONAL_CREDENTIALS_TABLE).delete();
    for (const name of Object.keys(identities)) delete identities[name];
  });

  it('stores on one replica and reveals on the other, per person and server, never in the clear', async () => {
    const first = await serviceOn(0, new CredentialCipher(keyA));
    const second = await serviceOn(1, new CredentialCipher(keyA));
    const dates = await first.save(alice, 'github', 'ghp_alice');
    await first.save(carol, 'github', 'ghp_carol');
    expect(await second.reveal(alice, 'github')).toBe('ghp_alice');
    expect(await second.reveal(carol, 'github')).toBe('ghp_carol');
    expect(await second.reveal(alice, 'jira')).toBeUndefined();
    const rows = await knexes[1](PERSONAL_CREDENTIALS_TABLE).select();
    expect(JSON.stringify(rows)).not.toMatch(/ghp_/);
    expect(await second.list(alice)).toEqual([
      { server: 'github', serverId: 'identity-of-github', current: true, ...dates },
    ]);
  });

  it('replaces a credential keeping its creation date, and deletes it once', async () => {
    let now = 1_000;
    const service = await PersonalCredentialService.create({
      store: new DatabasePersonalCredentialStore(knexes[0]),
      cipher: new CredentialCipher(keyA),
      serverIdentity,
      logger,
      now: () => now,
    });
    await service.save(alice, 'github', 'old');
    now = 2_000;
    expect(await service.save(alice, 'github', 'new')).toEqual({
      createdAt: 1_000,
      updatedAt: 2_000,
    });
    expect(await service.reveal(alice, 'github')).toBe('new');
    expect(await service.delete(alice, 'github')).toBe(true);
    expect(await service.delete(alice, 'github')).toBe(false);
    expect(await service.list(alice)).toEqual([]);
  });

  it('presents a credential only to the server it was stored for: a new server under the name starts empty', async () => {
    const service = await serviceOn(0, new CredentialCipher(keyA));
    identities.github = 'github-at-old-host';
    await service.save(alice, 'github', 'ghp_old_host');
    // The server is removed and another one takes its name (another host, or another uid).
    identities.github = 'github-at-new-host';
    expect(await service.reveal(alice, 'github')).toBeUndefined();
    expect(await service.list(alice)).toEqual([
      expect.objectContaining({ server: 'github', current: false }),
    ]);
    await service.save(alice, 'github', 'ghp_new_host');
    expect(await service.reveal(alice, 'github')).toBe('ghp_new_host');
    // The old server is never given the new one's credential either.
    identities.github = 'github-at-old-host';
    expect(await service.reveal(alice, 'github')).toBeUndefined();
  });

  it('does not open a row whose identity was rewritten in the database', async () => {
    const service = await serviceOn(0, new CredentialCipher(keyA));
    await service.save(alice, 'github', 'ghp_alice');
    await knexes[0](PERSONAL_CREDENTIALS_TABLE)
      .where({ principal: alice })
      .update({ server_id: 'identity-of-another' });
    identities.github = 'identity-of-another';
    await expect(service.reveal(alice, 'github')).rejects.toThrow(CredentialKeyError);
  });

  it('drops the credentials stored without a server identity when migrating, and migrates back down', async () => {
    const knex = knexes[0];
    // Back to the schema before the binding (whatever migrations came after it).
    while (await knex.schema.hasColumn(PERSONAL_CREDENTIALS_TABLE, 'server_id')) {
      await knex.migrate.down(BROKER_MIGRATIONS);
    }
    await knex(PERSONAL_CREDENTIALS_TABLE).insert({
      principal: alice,
      server: 'github',
      key_id: credentialKeyId(keyA),
      nonce: 'n',
      ciphertext: 'c',
      created_at: 1,
      updated_at: 1,
    });
    await migrateBrokerDatabase(knex);
    expect(await knex.schema.hasColumn(PERSONAL_CREDENTIALS_TABLE, 'server_id')).toBe(true);
    expect(await knex(PERSONAL_CREDENTIALS_TABLE).select()).toEqual([]);
  });

  it('refuses values that cannot be a header: empty, multi-line, too long', async () => {
    const service = await serviceOn(0, new CredentialCipher(keyA));
    await expect(service.save(alice, 'github', '  ')).rejects.toThrow('non-empty');
    await expect(service.save(alice, 'github', 'a\r\nX-Injected: 1')).rejects.toThrow('one line');
    await expect(service.save(alice, 'github', 'x'.repeat(8193))).rejects.toThrow('too long');
    expect(await service.list(alice)).toEqual([]);
  });

  it('fails start-up loudly with a wrong key or none, naming the config keys', async () => {
    await (await serviceOn(0, new CredentialCipher(keyA))).save(alice, 'github', 'ghp_alice');
    const wrong = serviceOn(1, new CredentialCipher(keyB));
    await expect(wrong).rejects.toThrow(CredentialKeyError);
    await expect(serviceOn(1, new CredentialCipher(keyB))).rejects.toThrow(
      `mcpBroker.credentialEncryptionKey is wrong: 1 personal credential(s) are stored encrypted with key ${credentialKeyId(keyA)}`,
    );
    await expect(serviceOn(1, undefined)).rejects.toThrow(
      'but mcpBroker.credentialEncryptionKey is not set',
    );
  });

  it('rotates: a new key with the old one listed re-encrypts every value, then the old key can go', async () => {
    const before = await serviceOn(0, new CredentialCipher(keyA));
    for (let i = 0; i < 3; i++) await before.save(`user:user:default/u${i}`, 'github', `v${i}`);
    const rotating = await serviceOn(1, new CredentialCipher(keyB, [keyA]));
    await rotating.whenRotated();
    const keyIds = await new DatabasePersonalCredentialStore(knexes[0]).keyIds();
    expect(keyIds).toEqual([{ keyId: credentialKeyId(keyB), count: 3 }]);
    const after = await serviceOn(0, new CredentialCipher(keyB));
    expect(await after.reveal('user:user:default/u2', 'github')).toBe('v2');
  });

  it('shares one credential request across replicas until it is completed once', async () => {
    const [a, b] = [
      new DatabaseCredentialRequestStore(knexes[0]),
      new DatabaseCredentialRequestStore(knexes[1]),
    ];
    await a.create({
      id: 'req-1',
      principal: alice,
      server: 'github',
      clientSessionId: 's',
      expiresAt: 5_000,
    });
    expect(await b.get('req-1', 1_000)).toEqual({
      id: 'req-1',
      principal: alice,
      server: 'github',
      clientSessionId: 's',
      expiresAt: 5_000,
    });
    expect(await b.get('req-1', 5_000)).toBeUndefined();
    const completions = await Promise.all([a.complete('req-1'), b.complete('req-1')]);
    expect(completions.filter(Boolean)).toHaveLength(1);
  });
});
