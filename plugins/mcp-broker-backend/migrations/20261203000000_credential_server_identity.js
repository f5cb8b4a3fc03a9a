// @ts-check
/*
 * Personal credentials bound to the server's identity, not only its name (spec §11.1):
 * `mcp_broker_personal_credentials.server_id` is the digest of the server's identity when the
 * credential was stored (identity/serverIdentity.ts: a config server's name and URL origin; a
 * registration's namespace, name, uid and URL origin). A credential is presented only to a server
 * with the same identity, so a new server under a removed server's name starts empty.
 *
 * Up deletes the credentials stored so far: the previous version kept no identity, so no row can
 * be shown to belong to the server now configured under its name — a server replaced before the
 * upgrade is exactly the case this closes. People are asked again, by the URL elicitation of their
 * next call, and store their credential once more. (Binding the rows to whatever server carries
 * the name at the first start would hand a replaced server's credentials to its successor.)
 *
 * Down drops the column: credentials stored since are then matched by name again, as the
 * previous version did.
 */

const TABLE = 'mcp_broker_personal_credentials';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex(TABLE).delete();
  await knex.schema.alterTable(TABLE, table => {
    table
      .string('server_id', 64)
      .notNullable()
      .defaultTo('')
      .comment('digest of the server identity the credential was stored for');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable(TABLE, table => {
    table.dropColumn('server_id');
  });
};
