// @ts-check
/*
 * Rate limits across replicas (mcpBroker.rateLimits with sessionStore: database; see
 * src/rateLimits/RateLimiter.ts):
 * - `mcp_broker_rate_windows`: per budget (a digest of the limit and the person) and window, the
 *   units leased so far. A replica takes a lease with one upsert that grants at most what the
 *   window has left, so the grants of a window never exceed the limit; `last_grant` returns what
 *   that statement granted. Rows of ended windows are swept.
 * - `mcp_broker_replicas`: each replica's heartbeat (alive until `alive_until`), from which a
 *   replica learns how many share a limit when it must count alone.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_rate_windows', table => {
    table.comment('Tool-call quota leased per budget and fixed window, across replicas');
    table.string('budget', 64).notNullable().comment('sha256 of (limit, principal), base64url');
    table.bigInteger('window_end').notNullable().comment('epoch ms');
    table.integer('used').notNullable().comment('units leased (or recorded) in this window');
    table.integer('last_grant').notNullable().comment('units the latest lease granted');
    table.primary(['budget', 'window_end'], 'mcp_broker_rate_windows_pk');
    table.index('window_end', 'mcp_broker_rate_windows_window_end_idx');
  });
  await knex.schema.createTable('mcp_broker_replicas', table => {
    table.comment('Heartbeats of broker replicas (rate limit shares)');
    table.string('replica_id', 64).primary();
    table.bigInteger('alive_until').notNullable().comment('epoch ms');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_replicas');
  await knex.schema.dropTable('mcp_broker_rate_windows');
};
