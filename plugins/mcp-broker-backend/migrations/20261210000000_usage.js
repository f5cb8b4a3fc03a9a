// @ts-check
/*
 * Usage people can see (docs/contracts/mcp-access.md §7.2): per UTC day, principal, server and
 * tool, how many tool calls were admitted, how many of them failed and how many a rate limit
 * refused. Every replica adds its counts to the same row (additive upserts), so a day's row is the
 * sum over the replicas. Rows name people but hold no secret; they are deleted after
 * `mcpBroker.usage.retention`.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_usage_daily', table => {
    table.comment('Tool calls per UTC day, principal, server and tool, summed over replicas');
    table.string('day', 10).notNullable().comment('YYYY-MM-DD, UTC');
    table
      .string('principal', 255)
      .notNullable()
      .comment('user entity ref (lower case) or service:<subject>');
    table.string('server', 253).notNullable();
    table.string('tool', 255).notNullable().comment("the backend's own tool name");
    table.integer('calls').notNullable();
    table.integer('errors').notNullable();
    table.integer('rate_limited').notNullable();
    table.primary(['day', 'principal', 'server', 'tool'], 'mcp_broker_usage_daily_pk');
    table.index(['server', 'day'], 'mcp_broker_usage_daily_server_idx');
    table.index(['principal', 'day'], 'mcp_broker_usage_daily_principal_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_usage_daily');
};
