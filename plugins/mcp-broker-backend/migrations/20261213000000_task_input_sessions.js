// @ts-check
/*
 * Task inputs without a client session (docs/contracts/tasks-and-apps.md §2.4, §2.12.4): a
 * 2025-11-25 backend's question during a 2026-07-28 client's task belongs to a person and a task,
 * not to a client session — it is listed in `inputRequests` on any replica and answered with
 * `tasks/update`. So `client_session_id` of `mcp_broker_elicitations` (widened with the task
 * columns by 20261212000000_task_inputs.js) becomes nullable, and `task_id` is indexed for the
 * task's listing and sweep.
 */

const TABLE = 'mcp_broker_elicitations';
const TASK_INDEX = 'mcp_broker_elicitations_task_idx';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable(TABLE, table => {
    table.setNullable('client_session_id');
    table.index('task_id', TASK_INDEX);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  // Task inputs have no client session: they cannot stay once the column is required again.
  await knex(TABLE).whereNull('client_session_id').delete();
  await knex.schema.alterTable(TABLE, table => {
    table.dropIndex('task_id', TASK_INDEX);
    table.dropNullable('client_session_id');
  });
};
