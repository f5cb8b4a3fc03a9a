// @ts-check
/*
 * One bus between replicas (issue #27): the signals of calls and sessions travel through one
 * table, read by one batched poller per replica (src/replicas/SignalBus.ts).
 * - `mcp_broker_signals`: a signal (`cancel`, `answer`, `message`, `end`) addressed to whoever
 *   waits for it (`call:<id>`, `relay:<id>:<round>`, `session:<id>`), in the order of `seq`,
 *   deleted once consumed and swept once expired.
 * It replaces the relayed cancellations (`mcp_broker_cancellations`) and the held calls'
 * mailbox (`mcp_broker_held_call_messages`), whose rows are short-lived by design: the up
 * migration drops them with what they hold (at most a minute of cancellations and the output of
 * retries served on another replica at that moment); `down` recreates them empty.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_signals', table => {
    table.comment(
      'Signals between broker replicas: cancellations, answers, relayed messages, ends',
    );
    table.bigIncrements('seq').primary();
    table
      .string('address', 255)
      .notNullable()
      .comment('call:<id>, relay:<id>:<round> or session:<id>');
    table.string('kind', 16).notNullable().comment('cancel, answer, message or end');
    table.text('payload').nullable().comment('JSON text or a reason, if any');
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.index(['address', 'seq'], 'mcp_broker_signals_address_idx');
    table.index('expires_at', 'mcp_broker_signals_expires_at_idx');
  });
  await knex.schema.dropTable('mcp_broker_cancellations');
  await knex.schema.dropTable('mcp_broker_held_call_messages');
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
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
  await knex.schema.dropTable('mcp_broker_signals');
};
