// @ts-check

/*
 * The broker's shared state for several replicas (mcpBroker.sessionStore: database):
 * client sessions and elicitation gateway ids. Both tables are small and short-lived: every row
 * carries `expires_at` (epoch milliseconds, compared against the replicas' clocks) and is swept
 * once expired. The elicitation claim is one `DELETE … RETURNING` on the primary key, so of any
 * number of concurrent claims on any replica at most one gets the row.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_client_sessions', table => {
    table.comment('MCP client sessions, recognised by every broker replica');
    table.string('id', 64).primary().comment('Mcp-Session-Id (256 random bits, base64url)');
    table.text('principal').notNullable().comment('user:<ref> or service:<subject>');
    table.string('protocol_version', 32).notNullable();
    table.text('client_capabilities').notNullable().comment('JSON object');
    table.text('client_info').nullable().comment('JSON object');
    table.bigInteger('expires_at').notNullable().comment('epoch ms; extended while in use');
    table.index('expires_at', 'mcp_broker_client_sessions_expires_at_idx');
  });
  await knex.schema.createTable('mcp_broker_elicitations', table => {
    table.comment(
      'Gateway ids of server-to-client requests; single-use, claimed by DELETE … RETURNING',
    );
    table.string('gateway_id', 200).primary();
    table.text('backend_request_id').notNullable().comment('the backend id as its raw JSON token');
    table.string('backend', 200).notNullable();
    table.text('backend_session_id').nullable();
    table.string('protocol_version', 32).notNullable();
    table.string('client_session_id', 64).notNullable();
    table.string('call_id', 64).notNullable();
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.index('client_session_id', 'mcp_broker_elicitations_client_session_idx');
    table.index('call_id', 'mcp_broker_elicitations_call_idx');
    table.index('expires_at', 'mcp_broker_elicitations_expires_at_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_elicitations');
  await knex.schema.dropTable('mcp_broker_client_sessions');
};
