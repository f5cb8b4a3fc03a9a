// @ts-check
/*
 * Task input carried between a client and a backend of different eras
 * (docs/contracts/tasks-and-apps.md §2.4, §2.12.3): the gateway ids of
 * `mcp_broker_elicitations` widened (one mechanism, widened) with the task an input belongs to,
 * the backend's `inputRequests` key it answers, the person it was asked of and the request shown.
 * An answer, on any replica, claims the id once and becomes the task's `tasks/update`.
 * Each column is added only when missing, so another migration that widened the table the same
 * way first leaves nothing for this one to do.
 */

/** The columns this migration adds. */
const COLUMNS = ['principal', 'task_id', 'backend_input_key', 'request_json'];

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  /** @type {string[]} */
  const missing = [];
  for (const column of COLUMNS) {
    if (!(await knex.schema.hasColumn('mcp_broker_elicitations', column))) missing.push(column);
  }
  if (missing.length === 0) return;
  await knex.schema.alterTable('mcp_broker_elicitations', table => {
    if (missing.includes('principal')) {
      table.string('principal', 255).nullable().comment('who was asked');
    }
    if (missing.includes('task_id')) {
      table.string('task_id', 300).nullable().comment('the broker task id the input belongs to');
    }
    if (missing.includes('backend_input_key')) {
      table.text('backend_input_key').nullable().comment("the modern backend's inputRequests key");
    }
    if (missing.includes('request_json')) {
      table.text('request_json').nullable().comment('the request shown to the client (≤ 64 KiB)');
    }
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  /** @type {string[]} */
  const present = [];
  for (const column of COLUMNS) {
    if (await knex.schema.hasColumn('mcp_broker_elicitations', column)) present.push(column);
  }
  if (present.length === 0) return;
  await knex.schema.alterTable('mcp_broker_elicitations', table => {
    table.dropColumns(...present);
  });
};
