// @ts-check
/*
 * Input of tasks that the broker carries between a client and a backend of different eras
 * (docs/contracts/tasks-and-apps.md §2.4, §2.12.3, §2.12.4): `mcp_broker_elicitations` is
 * widened rather than a second table made (one mechanism: a gateway id, claimed once by
 * `DELETE … RETURNING`). A task's input request belongs to a person and a task, not to a client
 * session: `client_session_id` becomes nullable, and `principal`, `task_id`, `backend_input_key`
 * (a 2026-07-28 backend's `inputRequests` key) and `request_json` (the request as a client is
 * shown it again, on any replica) are added. Each column is added only when it is missing, so
 * the widening can meet another change that made some of them already.
 */

const TABLE = 'mcp_broker_elicitations';
const TASK_INDEX = 'mcp_broker_elicitations_task_idx';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  const missing = async (/** @type {string} */ column) =>
    !(await knex.schema.hasColumn(TABLE, column));
  const add = {
    principal: await missing('principal'),
    taskId: await missing('task_id'),
    backendInputKey: await missing('backend_input_key'),
    requestJson: await missing('request_json'),
  };
  await knex.schema.alterTable(TABLE, table => {
    table.setNullable('client_session_id');
    if (add.principal) table.string('principal', 255).nullable().comment('owner of a task input');
    if (add.taskId) {
      table.string('task_id', 300).nullable().comment('the broker task id of a task input');
      table.index('task_id', TASK_INDEX);
    }
    if (add.backendInputKey) {
      table
        .text('backend_input_key')
        .nullable()
        .comment("a 2026-07-28 backend's inputRequests key");
    }
    if (add.requestJson) {
      table.text('request_json').nullable().comment('the request as shown to clients (JSON)');
    }
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  // Task inputs have no client session: they cannot stay once the column is required again.
  await knex(TABLE).whereNull('client_session_id').delete();
  const present = async (/** @type {string} */ column) => knex.schema.hasColumn(TABLE, column);
  const drop = {
    principal: await present('principal'),
    taskId: await present('task_id'),
    backendInputKey: await present('backend_input_key'),
    requestJson: await present('request_json'),
  };
  await knex.schema.alterTable(TABLE, table => {
    if (drop.taskId) {
      table.dropIndex('task_id', TASK_INDEX);
      table.dropColumn('task_id');
    }
    if (drop.principal) table.dropColumn('principal');
    if (drop.backendInputKey) table.dropColumn('backend_input_key');
    if (drop.requestJson) table.dropColumn('request_json');
    table.dropNullable('client_session_id');
  });
};
