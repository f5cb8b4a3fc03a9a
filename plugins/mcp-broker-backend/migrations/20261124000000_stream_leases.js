// @ts-check
/*
 * Session limits and the one-GET-stream-per-session rule across replicas (issue #20):
 * - `principal` is indexed: the per-principal session limit counts a principal's live sessions.
 * - `stream_holder` / `stream_lease_expires_at`: the lease of the session's GET stream. The
 *   replica holding the stream renews it while open and clears it when the stream ends; a
 *   crashed replica's lease lapses by itself. Taken with one conditional UPDATE.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table
      .string('stream_holder', 64)
      .nullable()
      .comment('random token of the open GET stream, if any');
    table
      .bigInteger('stream_lease_expires_at')
      .nullable()
      .comment('epoch ms; renewed while the stream is open');
    table.index('principal', 'mcp_broker_client_sessions_principal_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table.dropIndex('principal', 'mcp_broker_client_sessions_principal_idx');
    table.dropColumn('stream_lease_expires_at');
    table.dropColumn('stream_holder');
  });
};
