// @ts-check

/*
 * Pagination (spec §9): pages are ordered by (created_at, namespace, name) and read with
 * keyset queries, so each list filter gets an index that starts with its equality
 * columns and ends with that order. A page is then one index range of `limit + 1`
 * entries: its cost grows neither with the table nor with the page's position.
 *
 * - products: every product; by owner (the `.own` scope).
 * - keys: every key; by phase (the admin's status filter); by requester ("my requests"
 *   and the requester half of the ownership filter); by namespace.
 * - The product-owner half of the ownership filter uses the existing
 *   (namespace, product_name) index: its cost follows the keys of the caller's own
 *   products, not the table.
 * - `portal_page_token_keys`: the key that signs page tokens, generated once by the
 *   first replica to start and shared by every replica on this database.
 */

/** @type {Array<[table: string, index: string, leading: string[]]>} */
const INDEXES = [
  ['portal_api_products', 'portal_api_products_page_idx', []],
  ['portal_api_products', 'portal_api_products_owner_page_idx', ['owner']],
  ['portal_api_keys', 'portal_api_keys_page_idx', []],
  ['portal_api_keys', 'portal_api_keys_phase_page_idx', ['phase']],
  ['portal_api_keys', 'portal_api_keys_requested_by_page_idx', ['requested_by']],
  ['portal_api_keys', 'portal_api_keys_namespace_page_idx', ['namespace']],
];

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  for (const [table, name, leading] of INDEXES) {
    const columns = [...leading, 'created_at', 'namespace', 'name'].filter(
      (column, index, all) => all.indexOf(column) === index,
    );
    await knex.schema.alterTable(table, t => t.index(columns, name));
  }
  await knex.schema.createTable('portal_page_token_keys', table => {
    table.comment('The HMAC key of page tokens, shared by every replica');
    table.string('id', 16).notNullable().primary();
    table.string('secret', 128).notNullable().comment('base64url, 32 random bytes');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('portal_page_token_keys');
  for (const [table, name] of INDEXES) {
    await knex.schema.alterTable(table, t => t.dropIndex([], name));
  }
};
