// @ts-check

/*
 * The portal's tables: API products, API keys (key requests) and their secrets.
 *
 * - Secrets live in their own table so that no list query can ever select them.
 * - Foreign keys cascade (product → keys → secrets), so a key can never be inserted for
 *   a product that a concurrent transaction deleted, and an approval racing a delete
 *   cannot leave an orphaned secret behind.
 * - A partial unique index allows one Pending request per requester, product and tier,
 *   which makes the duplicate check race-free on SQLite and PostgreSQL alike.
 * - Timestamps are RFC 3339 strings (what the API returns); resource versions are
 *   integers, incremented on each write and returned as strings.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('portal_api_products', table => {
    table.comment('API products (kind APIProduct); status.plans is derived, not stored');
    table.string('namespace', 253).notNullable();
    table.string('name', 253).notNullable();
    table.string('uid', 36).notNullable();
    table.integer('resource_version').notNullable();
    table.string('created_at', 40).notNullable().comment('RFC 3339');
    table
      .text('owner')
      .notNullable()
      .comment('Copy of the backstage.io/owner annotation, for ownership filters');
    table.text('labels').nullable().comment('JSON object');
    table.text('annotations').nullable().comment('JSON object');
    table.text('spec').notNullable().comment('JSON object');
    table.primary(['namespace', 'name']);
    table.index(['owner'], 'portal_api_products_owner_idx');
  });

  await knex.schema.createTable('portal_api_keys', table => {
    table.comment('API key requests (kind APIKey); their secrets are elsewhere');
    table.string('namespace', 253).notNullable();
    table.string('name', 253).notNullable();
    table.string('uid', 36).notNullable();
    table.integer('resource_version').notNullable();
    table.string('created_at', 40).notNullable().comment('RFC 3339');
    table.string('product_name', 253).notNullable();
    table.text('plan_tier').notNullable();
    table.text('use_case').nullable();
    table.text('requested_by').notNullable().comment('User entity ref');
    table.text('requester_email').nullable();
    table.string('expires_at', 40).nullable().comment('RFC 3339');
    table.string('phase', 16).notNullable();
    table.text('reviewed_by').nullable();
    table.string('reviewed_at', 40).nullable().comment('RFC 3339');
    table.text('reason').nullable();
    table.boolean('secret_revealed').notNullable().defaultTo(false);
    table.string('secret_revealed_at', 40).nullable().comment('RFC 3339');
    table.primary(['namespace', 'name']);
    table
      .foreign(['namespace', 'product_name'], 'portal_api_keys_product_fk')
      .references(['namespace', 'name'])
      .inTable('portal_api_products')
      .onDelete('CASCADE');
    // "My requests" and the requester half of the ownership filter.
    table.index(['requested_by'], 'portal_api_keys_requested_by_idx');
    // Keys of a product: the product-owner half of the ownership filter, cascades.
    table.index(['namespace', 'product_name'], 'portal_api_keys_product_idx');
    // Admin lists filtered by status.
    table.index(['phase'], 'portal_api_keys_phase_idx');
  });

  // One Pending request per requester, product and tier (SQLite ≥ 3.8 and PostgreSQL).
  await knex.raw(
    `CREATE UNIQUE INDEX portal_api_keys_one_pending_idx
       ON portal_api_keys (namespace, product_name, requested_by, plan_tier)
       WHERE phase = 'Pending'`,
  );

  await knex.schema.createTable('portal_api_key_secrets', table => {
    table.comment('The one-time secret of each Approved key, never joined into lists');
    table.string('namespace', 253).notNullable();
    table.string('name', 253).notNullable();
    table.text('secret').notNullable();
    table.primary(['namespace', 'name']);
    table
      .foreign(['namespace', 'name'], 'portal_api_key_secrets_key_fk')
      .references(['namespace', 'name'])
      .inTable('portal_api_keys')
      .onDelete('CASCADE');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('portal_api_key_secrets');
  await knex.raw('DROP INDEX portal_api_keys_one_pending_idx');
  await knex.schema.dropTable('portal_api_keys');
  await knex.schema.dropTable('portal_api_products');
};
