// @ts-check
/*
 * Long-running tasks (docs/contracts/tasks-and-apps.md §2.4): one row per task a person started
 * through the broker, shared by every replica. The broker task id (`<server>:<256 random bits>`)
 * is the key; the backend's own id never leaves this table towards a client. A row starts as a
 * `pending` slot reserved under the per-person bound (§2.6) and becomes the task when the backend
 * answers with one; every later observation of the task is a compare-and-set on `version`.
 * Rows expire with the task's ttl (capped by mcpBroker.tasks.maxTtl) and are swept.
 * The lease columns (the watcher of §2.10) and `held_result` (§2.12.3) are part of the table
 * from the start, so later features add no migration of a shared table.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('mcp_broker_tasks', table => {
    table.comment('Tasks started through the broker, per person, shared by every replica');
    table.string('task_id', 300).primary().comment('the broker task id');
    table
      .string('principal', 255)
      .notNullable()
      .comment('owner: user entity ref or service:<subject>');
    table.string('server', 255).notNullable().comment('configured server name');
    table
      .string('server_identity', 64)
      .notNullable()
      .comment("base64url SHA-256 of the server's identity");
    table.string('tool', 255).notNullable().comment("the backend's own tool name");
    table.text('tool_annotations').nullable().comment("the tool's annotations at creation (JSON)");
    table.string('credential_mode', 32).notNullable();
    table.string('backend_era', 8).notNullable().comment('legacy or modern');
    table.text('backend_task_id').nullable().comment("the backend's task id (null while pending)");
    table
      .string('backend_session_id', 255)
      .nullable()
      .comment('legacy backend: the pinned backend session that created the task');
    table.string('status', 16).notNullable().comment('pending or the last observed status');
    table.text('status_message').nullable();
    table.string('created_at', 40).nullable().comment("the backend's createdAt, verbatim");
    table.string('last_updated_at', 40).nullable().comment("the backend's lastUpdatedAt");
    table.bigInteger('ttl_ms').nullable().comment('lifetime shown to clients');
    table.integer('poll_interval_ms').nullable();
    table.text('held_result').nullable().comment('result JSON of a task the broker made itself');
    table.bigInteger('recorded_at').notNullable().comment('epoch ms, when the slot was reserved');
    table.bigInteger('expires_at').notNullable().comment('epoch ms');
    table.integer('version').notNullable().comment('observation counter (compare-and-set)');
    table.string('creating_trace', 55).nullable().comment('traceparent of the creating span');
    table.string('lease_holder', 64).nullable().comment('replica watching the task');
    table.bigInteger('lease_until').nullable().comment('epoch ms');
    table.index(['principal', 'recorded_at', 'task_id'], 'mcp_broker_tasks_principal_idx');
    table.index('expires_at', 'mcp_broker_tasks_expires_at_idx');
    table.index('backend_session_id', 'mcp_broker_tasks_backend_session_idx');
    table.index(['principal', 'status'], 'mcp_broker_tasks_open_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('mcp_broker_tasks');
};
