// @ts-check
/*
 * Curated endpoints (spec §13, docs/contracts/curated-endpoints.md §1): a client session belongs
 * to the endpoint it was made on. `endpoint` is that endpoint's name, null for the main endpoint;
 * a request on another path does not find the session.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table
      .string('endpoint', 63)
      .nullable()
      .comment('the curated endpoint the session was made on; null: the main endpoint');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('mcp_broker_client_sessions', table => {
    table.dropColumn('endpoint');
  });
};
