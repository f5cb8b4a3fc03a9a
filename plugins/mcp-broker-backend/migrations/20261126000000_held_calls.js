// @ts-check
/*
 * 2026-07-28 clients across replicas (spec §9, §6): a tool call held for a client's input lives
 * on the replica that holds its backend stream; the client's retry may land on any replica.
 * - `mcp_broker_held_calls`: the current `input_required` round of each held call, published by
 *   the holding replica before the client sees the round: which backend session to answer, the
 *   backend's raw request ids per input key, and — once a retry landed elsewhere — that
 *   replica's claim of the round (one conditional UPDATE: one claim per round).
 * - `mcp_broker_held_call_messages`: the mailbox. What the held backend stream yields after a
 *   claimed round (progress, the next input_required, the final result or error) in order
 *   (`seq`), with an end-of-leg row (`message` null); the claiming replica reads it.
 * Rows expire (`expires_at`) and are swept with the elicitation ids.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_held_calls', table => {
    table.comment('The current input_required round of each held tool call');
    table.string('call_id', 64).primary();
    table.integer('round').notNullable();
    table.string('backend', 255).notNullable();
    table.string('backend_session_id', 255).nullable();
    table.string('protocol_version', 32).notNullable();
    table.text('asked').notNullable().comment('JSON [{key, rawId}] of the round');
    table.text('resumption').nullable().comment('JSON claim of the round by another replica');
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.index('expires_at', 'mcp_broker_held_calls_expires_at_idx');
  });
  await knex.schema.createTable('mcp_broker_held_call_messages', table => {
    table.comment('Mailbox: what a held call yields for a retry served by another replica');
    table.bigIncrements('seq').primary();
    table.string('call_id', 64).notNullable();
    table.integer('round').notNullable();
    table.text('message').nullable().comment('JSON-RPC message; null ends the leg');
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.index(['call_id', 'round', 'seq'], 'mcp_broker_held_call_messages_call_idx');
    table.index('expires_at', 'mcp_broker_held_call_messages_expires_at_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_held_call_messages');
  await knex.schema.dropTable('mcp_broker_held_calls');
};
