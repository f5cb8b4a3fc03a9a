// @ts-check

/*
 * Expiry announcements (contract mcp-access §4.5): the scheduled task `portal-key-expiry`
 * claims each Approved key whose `expires_at` has passed exactly once, by a compare-and-set
 * on `expiry_announced_at` (`UPDATE … SET expiry_announced_at = :now WHERE … AND
 * expiry_announced_at IS NULL`), then publishes `apikey.expired` and notifies the requester.
 *
 * - `expiry_announced_at`: RFC 3339, null until announced; it is bookkeeping, not part of
 *   the API object (no resource version change).
 * - `portal_api_keys_expiry_idx`: the task's candidates (Approved, not announced) by
 *   `expires_at`, a partial index so it holds only the keys still to announce, not history.
 */

/*
 * Outside knex's migration transaction: SQLite drops a column (`down`) by rebuilding the table,
 * and only outside a transaction can knex switch foreign keys off for that; inside one,
 * dropping the old `portal_api_keys` would cascade over every key's secret. `up` makes its own
 * transaction.
 */
exports.config = { transaction: false };

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.transaction(trx => upInTransaction(trx));
};

/**
 * @param {import('knex').Knex.Transaction} knex
 */
async function upInTransaction(knex) {
  await knex.schema.alterTable('portal_api_keys', table => {
    table
      .string('expiry_announced_at', 40)
      .nullable()
      .comment('RFC 3339; when the expiry task announced this key expired (once)');
  });
  await knex.raw(
    `CREATE INDEX portal_api_keys_expiry_idx
       ON portal_api_keys (expires_at)
       WHERE phase = 'Approved' AND expiry_announced_at IS NULL AND expires_at IS NOT NULL`,
  );
}

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.raw('DROP INDEX portal_api_keys_expiry_idx');
  await knex.schema.alterTable('portal_api_keys', table => {
    table.dropColumn('expiry_announced_at');
  });
};
