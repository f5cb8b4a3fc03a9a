// @ts-check
/*
 * Access grants (docs/contracts/mcp-access.md §5.3): what people were granted on broker servers
 * and endpoints, written by grant sources (the portal, through its module) and read by every
 * replica, ordered by one revision counter.
 * - `mcp_broker_access_grants`: the live grants and the removed ones (tombstones, `removed_at`
 *   set; a removal is final: an upsert of a removed id is ignored). `revision` is the feed
 *   revision of the row's last change.
 * - `mcp_broker_access_grant_feed`: one row, `id = 'feed'`, whose `revision` every write bumps
 *   first (the row lock serialises writers, so revisions commit in order) and `swept_through`,
 *   the highest revision of a tombstone that was deleted.
 * Rows name people but hold no secret.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_access_grants', table => {
    table.comment('Access grants to MCP servers and endpoints, and recent removals');
    table.string('id', 255).primary().comment('<source>:<grant id>');
    table.string('group_ref', 255).notNullable().comment('<source>:<group>');
    table.string('subject', 255).notNullable().comment('user entity ref, lower case');
    table.string('target_kind', 16).notNullable().comment('server | endpoint');
    table.string('target_name', 253).notNullable();
    table.text('title').notNullable();
    table.text('plan').notNullable();
    table.text('limits').notNullable().comment('JSON array of {calls, windowMs, tools?}');
    table.text('links').nullable().comment('JSON');
    table.bigInteger('approved_at').notNullable().comment('epoch ms');
    table.bigInteger('expires_at').nullable().comment('epoch ms');
    table.bigInteger('removed_at').nullable().comment('epoch ms; a tombstone when set');
    table.bigInteger('revision').notNullable().comment('feed revision of the last change');
    table.index('group_ref', 'mcp_broker_access_grants_group_idx');
    table.index('subject', 'mcp_broker_access_grants_subject_idx');
    table.index('revision', 'mcp_broker_access_grants_revision_idx');
  });
  await knex.schema.createTable('mcp_broker_access_grant_feed', table => {
    table.comment('The revision counter of mcp_broker_access_grants (one row)');
    table.string('id', 16).primary();
    table.bigInteger('revision').notNullable();
    table.bigInteger('swept_through').notNullable();
  });
  await knex('mcp_broker_access_grant_feed').insert({ id: 'feed', revision: 0, swept_through: 0 });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_access_grant_feed');
  await knex.schema.dropTable('mcp_broker_access_grants');
};
