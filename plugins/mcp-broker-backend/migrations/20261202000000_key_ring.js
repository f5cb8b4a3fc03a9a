// @ts-check
/*
 * The broker's own keys as rotating rings, encrypted at rest (spec §11.1).
 * - `mcp_broker_key_ring`: generations of the subject-token signing key (`subject-token`) and of
 *   the requestState HMAC key (`request-state`), per purpose. `kek_id`, `nonce` and `ciphertext`
 *   hold the key sealed with the key-encryption key (`mcpBroker.credentialEncryptionKey`);
 *   `plaintext` is only ever set by this migration, for the keys the previous version kept in
 *   the clear, and the first start of the broker seals them (identity/KeyRing.ts) or, without a
 *   key-encryption key, deletes them.
 * Moves the single keys of `mcp_broker_signing_keys` and `mcp_broker_keys` into the ring as its
 * first generations (they keep signing and verifying: no token or requestState issued before the
 * upgrade is refused) and drops those tables.
 *
 * Down: recreates the two tables with the newest key of each purpose that is still in the clear.
 * Sealed keys cannot be opened here (the key-encryption key is config, not data): they are
 * dropped, and the previous version generates new keys on its first start (subject tokens live two
 * minutes; requestStates issued before are refused, and their clients start the call again).
 */

const RING = 'mcp_broker_key_ring';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable(RING, table => {
    table.comment('Generations of the broker’s own keys, sealed with the key-encryption key');
    table.string('purpose', 32).notNullable().comment('subject-token or request-state');
    table.integer('generation').notNullable().comment('1, 2, …; the newest signs once active');
    table.string('kid', 64).notNullable().comment('the key id (published in the JWKS)');
    table.string('kek_id', 32).nullable().comment('id of the key-encryption key that sealed it');
    table.string('nonce', 32).nullable().comment('AES-GCM nonce, base64url');
    table.text('ciphertext').nullable().comment('the sealed key and tag, base64url');
    table.text('plaintext').nullable().comment('only a key of the previous version, until sealed');
    table.bigInteger('created_at').notNullable().comment('epoch ms');
    table.bigInteger('activates_at').notNullable().comment('epoch ms: signs from then on');
    table.primary(['purpose', 'generation']);
  });
  const now = Date.now();
  const signing = await knex('mcp_broker_signing_keys').where({ kid: 'subject-token' }).first();
  if (signing !== undefined) {
    const kid = JSON.parse(signing.private_jwk).kid;
    await knex(RING).insert({
      purpose: 'subject-token',
      generation: 1,
      kid: typeof kid === 'string' ? kid : 'subject-token',
      plaintext: signing.private_jwk,
      created_at: signing.created_at,
      activates_at: signing.created_at,
    });
  }
  const hmac = await knex('mcp_broker_keys').where({ id: 'request-state' }).first();
  if (hmac !== undefined) {
    await knex(RING).insert({
      purpose: 'request-state',
      generation: 1,
      kid: 'request-state',
      plaintext: hmac.secret,
      created_at: now,
      activates_at: now,
    });
  }
  await knex.schema.dropTable('mcp_broker_signing_keys');
  await knex.schema.dropTable('mcp_broker_keys');
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.createTable('mcp_broker_keys', table => {
    table.comment('Keys shared by every broker replica (the requestState HMAC key)');
    table.string('id', 32).primary();
    table.string('secret', 128).notNullable().comment('base64url, 32 random bytes');
  });
  await knex.schema.createTable('mcp_broker_signing_keys', table => {
    table.comment('The key pair of the subject tokens the broker signs (token exchange)');
    table.string('kid', 64).primary();
    table.text('private_jwk').notNullable().comment('the private key as a JWK');
    table.bigInteger('created_at').notNullable().comment('epoch ms');
  });
  const newestInTheClear = (/** @type {string} */ purpose) =>
    knex(RING).where({ purpose }).whereNotNull('plaintext').orderBy('generation', 'desc').first();
  const signing = await newestInTheClear('subject-token');
  if (signing !== undefined) {
    await knex('mcp_broker_signing_keys').insert({
      kid: 'subject-token',
      private_jwk: signing.plaintext,
      created_at: signing.created_at,
    });
  }
  const hmac = await newestInTheClear('request-state');
  if (hmac !== undefined) {
    await knex('mcp_broker_keys').insert({ id: 'request-state', secret: hmac.plaintext });
  }
  await knex.schema.dropTable(RING);
};
