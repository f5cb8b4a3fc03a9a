// @ts-check
/*
 * A replica that dies (SIGKILL, out of memory, a node lost) gives nothing up (issue #41): what it
 * held is taken over as soon as its presence lapses, instead of after each hold's own lease.
 * - `mcp_broker_replicas` (from 20261201000000_rate_limits.js) is now every replica's presence:
 *   each replica marks itself alive every few seconds (src/replicas/ReplicaPresence.ts).
 * - `mcp_broker_client_sessions.stream_replica`: the replica that holds the session's GET stream
 *   lease; another replica may take the lease once that replica's presence lapsed.
 * - `mcp_broker_held_calls.holder_replica`: the replica that holds the call's backend stream; a
 *   round whose holder is gone is refused to a retry (and an answer to it reaches nobody).
 * Null (rows written by a replica of an earlier version) means "never counted as gone": those
 * holds lapse with their own leases as before.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table
      .string('stream_replica', 64)
      .nullable()
      .comment('id of the replica holding the GET stream lease (mcp_broker_replicas)');
  });
  await knex.schema.alterTable('mcp_broker_held_calls', table => {
    table
      .string('holder_replica', 64)
      .nullable()
      .comment('id of the replica holding the call (mcp_broker_replicas)');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('mcp_broker_held_calls', table => {
    table.dropColumn('holder_replica');
  });
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table.dropColumn('stream_replica');
  });
};
