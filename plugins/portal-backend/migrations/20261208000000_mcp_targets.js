// @ts-check

/*
 * Targets as columns (contract mcp-access §3.5): what a product exposes and which MCP target
 * a key grants, so the product filter of §4.8, the grant list and the grant count of a plan
 * tier (§3.3) are index ranges instead of reading every product's `spec`.
 *
 * - `portal_api_products.target_kind` / `target_name`: the product's `spec.targetRef` kind
 *   and name (`HTTPRoute`, `MCPServer`, `MCPEndpoint`), backfilled from `spec`; index
 *   `portal_api_products_target_page_idx` for the target filter in page order.
 * - `portal_api_keys.mcp_target`: `MCPServer/example` (`mcpTargetKey`) for an access request
 *   of an MCP product, copied from the product when the request is created (an MCP product's
 *   target never changes, §3.3), null for an HTTP key; backfilled from the products. The
 *   partial index `portal_api_keys_mcp_grants_idx` holds only Approved access requests, in
 *   page order: the grant list and the live-grant count read it.
 *
 * The backfill reads and writes through knex row by row (products are few), so it runs the
 * same on SQLite and PostgreSQL without JSON functions of either.
 */

const MCP_KINDS = ['MCPServer', 'MCPEndpoint'];

/*
 * Outside knex's migration transaction: SQLite drops a column by rebuilding the table, and
 * only outside a transaction can knex switch foreign keys off for that; inside one, dropping
 * the old `portal_api_products` would cascade over every key. `up` makes its own transaction.
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
  await knex.schema.alterTable('portal_api_products', table => {
    table
      .string('target_kind', 32)
      .notNullable()
      .defaultTo('HTTPRoute')
      .comment('spec.targetRef.kind: HTTPRoute, MCPServer or MCPEndpoint');
    table.string('target_name', 253).notNullable().defaultTo('').comment('spec.targetRef.name');
  });
  await knex.schema.alterTable('portal_api_keys', table => {
    table
      .string('mcp_target', 300)
      .nullable()
      .comment('MCPServer/<name> or MCPEndpoint/<name> for an access request; null for a key');
  });

  const products = await knex('portal_api_products').select('namespace', 'name', 'spec');
  for (const product of products) {
    const targetRef = JSON.parse(product.spec).targetRef ?? {};
    const kind = String(targetRef.kind ?? 'HTTPRoute');
    const name = String(targetRef.name ?? '');
    await knex('portal_api_products')
      .where({ namespace: product.namespace, name: product.name })
      .update({ target_kind: kind, target_name: name });
    if (MCP_KINDS.includes(kind)) {
      await knex('portal_api_keys')
        .where({ namespace: product.namespace, product_name: product.name })
        .update({ mcp_target: `${kind}/${name}` });
    }
  }

  await knex.schema.alterTable('portal_api_products', table => {
    table.index(
      ['target_kind', 'target_name', 'created_at', 'namespace', 'name'],
      'portal_api_products_target_page_idx',
    );
  });
  await knex.raw(
    `CREATE INDEX portal_api_keys_mcp_grants_idx
       ON portal_api_keys (mcp_target, created_at, namespace, name)
       WHERE phase = 'Approved' AND mcp_target IS NOT NULL`,
  );
}

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.raw('DROP INDEX portal_api_keys_mcp_grants_idx');
  await knex.schema.alterTable('portal_api_keys', table => {
    table.dropColumn('mcp_target');
  });
  await knex.schema.alterTable('portal_api_products', table => {
    table.dropIndex([], 'portal_api_products_target_page_idx');
  });
  await knex.schema.alterTable('portal_api_products', table => {
    table.dropColumn('target_kind');
    table.dropColumn('target_name');
  });
};
