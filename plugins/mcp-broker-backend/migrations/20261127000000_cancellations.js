// @ts-check
/*
 * A 2025-11-25 client's `notifications/cancelled` across replicas (spec §4, §6): the call runs
 * on the replica that took its POST; the cancellation may land on another one.
 * - `mcp_broker_cancellations`: a cancellation the receiving replica could not act on (the call
 *   is not in flight there), keyed by the verified client session and the client's request id
 *   as its raw JSON token (`"7"` and `7` differ). A replica with calls of that session in flight
 *   reads the rows of its sessions at a short interval, cancels the matching call and deletes
 *   the row. Rows expire (`expires_at`) and are swept with the elicitation ids.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_cancellations', table => {
    table.comment('Cancellations by clients of calls in flight on another replica');
    table.bigIncrements('id').primary();
    table.string('client_session_id', 64).notNullable();
    table.text('request_key').notNullable().comment('the client request id as raw JSON');
    table.text('reason').nullable().comment('the reason the client gave, if any');
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.index('client_session_id', 'mcp_broker_cancellations_client_session_idx');
    table.index('expires_at', 'mcp_broker_cancellations_expires_at_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_cancellations');
};
