// @ts-check
/*
 * Pinned tool definitions (spec §13): one row per server and tool, shared by the replicas.
 * - `digest`/`definition`: the definition clients are served (first seen, or last approved).
 * - `pending_*`: a changed definition the backend now serves, held back under `enforce` until
 *   someone approves it (`pending_state` `held`) or after someone rejected it (`rejected`: the
 *   old definition stays pinned and the tool withheld until the backend serves it again).
 * - `tool_key`: a digest of the tool's name, so the key has one length whatever the name.
 * - `revision`: increased by every change of the row, so replicas can tell what they missed.
 */

const PINS = 'mcp_broker_tool_pins';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable(PINS, table => {
    table.comment('Pinned tool definitions per server (spec §13), shared by the replicas');
    table.string('server', 255).notNullable().comment('the broker’s server name');
    table.string('tool_key', 64).notNullable().comment('sha256 (hex) of the tool’s own name');
    table.text('tool').notNullable().comment('the tool’s own name (unprefixed)');
    table.string('digest', 64).notNullable().comment('sha256 of the pinned definition');
    table.text('definition').notNullable().comment('the pinned definition (JSON)');
    table.bigInteger('pinned_at').notNullable().comment('epoch ms: first seen or approved');
    table.string('pinned_by', 255).nullable().comment('who approved it; null when first seen');
    table.string('pending_digest', 64).nullable().comment('the changed definition’s digest');
    table.text('pending_definition').nullable().comment('the changed definition (JSON)');
    table.string('pending_state', 16).nullable().comment('held or rejected');
    table.bigInteger('pending_since').nullable().comment('epoch ms: when the change was seen');
    table.string('decided_by', 255).nullable().comment('who rejected the pending definition');
    table.bigInteger('revision').notNullable().defaultTo(1).comment('increased on every change');
    table.primary(['server', 'tool_key']);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable(PINS);
};
