/*
 * The UsageStore on the plugin's database, SQLite and PostgreSQL alike
 * (migrations/20261210000000_usage.js). A write is one transaction of additive upserts, 500 rows
 * a statement (`INSERT … ON CONFLICT (day, principal, server, tool) DO UPDATE SET calls =
 * calls + excluded.calls, …`): replicas writing the same row at once add up (PostgreSQL
 * serialises the two upserts of one row; SQLite runs one statement at a time), and a write that
 * fails part-way commits nothing, so its rows can be written again.
 */
import type { Knex } from 'knex';
import type {
  DayRange,
  PeoplePosition,
  PersonTotals,
  ServerTotals,
  UsageRow,
  UsageStore,
} from '../usage/UsageStore';

/** The daily usage rows (see migrations/). */
export const USAGE_DAILY_TABLE = 'mcp_broker_usage_daily';

const T = USAGE_DAILY_TABLE;
/** Rows per upsert statement (7 parameters each, well under every driver's limit). */
const ROWS_PER_STATEMENT = 500;

const SUMS = {
  calls: `SUM(calls)`,
  errors: `SUM(errors)`,
  rateLimited: `SUM(rate_limited)`,
};

/** Numbers come back as strings from PostgreSQL's SUM and COUNT. */
function countersOf(row: Record<string, unknown>) {
  return {
    calls: Number(row.calls),
    errors: Number(row.errors),
    rateLimited: Number(row.rateLimited ?? row.rate_limited),
  };
}

/** {@link UsageStore} on the plugin's database; see the file comment. */
export class DatabaseUsageStore implements UsageStore {
  constructor(private readonly knex: Knex) {}

  async add(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.knex.transaction(async tx => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
        await tx(T)
          .insert(
            rows.slice(i, i + ROWS_PER_STATEMENT).map(row => ({
              day: row.day,
              principal: row.principal,
              server: row.server,
              tool: row.tool,
              calls: row.calls,
              errors: row.errors,
              rate_limited: row.rateLimited,
            })),
          )
          .onConflict(['day', 'principal', 'server', 'tool'])
          .merge({
            calls: tx.raw(`${T}.calls + excluded.calls`),
            errors: tx.raw(`${T}.errors + excluded.errors`),
            rate_limited: tx.raw(`${T}.rate_limited + excluded.rate_limited`),
          });
      }
    });
  }

  async rowsOf(principal: string, range: DayRange, server?: string): Promise<UsageRow[]> {
    const query = this.knex(T)
      .where('principal', principal)
      .whereBetween('day', [range.from, range.to])
      .orderBy(['day', 'server', 'tool']);
    if (server !== undefined) query.where('server', server);
    const rows: Array<Record<string, unknown>> = await query.select();
    return rows.map(row => ({
      day: String(row.day),
      principal: String(row.principal),
      server: String(row.server),
      tool: String(row.tool),
      ...countersOf(row),
    }));
  }

  async serverTotals(range: DayRange): Promise<ServerTotals[]> {
    const rows: Array<Record<string, unknown>> = await this.knex(T)
      .whereBetween('day', [range.from, range.to])
      .groupBy('server')
      .orderBy('server')
      .select('server', ...this.#sums(), this.knex.raw('COUNT(DISTINCT principal) AS people'));
    return rows.map(row => ({
      server: String(row.server),
      ...countersOf(row),
      people: Number(row.people),
    }));
  }

  async seriesOf(server: string, range: DayRange) {
    const rows: Array<Record<string, unknown>> = await this.knex(T)
      .where('server', server)
      .whereBetween('day', [range.from, range.to])
      .groupBy('day', 'tool')
      .orderBy(['day', 'tool'])
      .select('day', 'tool', ...this.#sums());
    return rows.map(row => ({ day: String(row.day), tool: String(row.tool), ...countersOf(row) }));
  }

  async peopleOf(
    server: string,
    range: DayRange,
    limit: number,
    after?: PeoplePosition,
  ): Promise<PersonTotals[]> {
    const query = this.knex(T)
      .where('server', server)
      .whereBetween('day', [range.from, range.to])
      .groupBy('principal')
      .orderByRaw(`${SUMS.calls} DESC, principal ASC`)
      .limit(limit)
      .select('principal', ...this.#sums(), this.knex.raw('MAX(day) AS "lastDay"'));
    if (after !== undefined) {
      query.havingRaw(`${SUMS.calls} < ? OR (${SUMS.calls} = ? AND principal > ?)`, [
        after.calls,
        after.calls,
        after.principal,
      ]);
    }
    const rows: Array<Record<string, unknown>> = await query;
    return rows.map(row => ({
      principal: String(row.principal),
      ...countersOf(row),
      lastDay: String(row.lastDay),
    }));
  }

  /** The three counters summed over a group, as `calls`, `errors`, `rateLimited`. */
  #sums(): Knex.Raw[] {
    return [
      this.knex.raw(`${SUMS.calls} AS calls`),
      this.knex.raw(`${SUMS.errors} AS errors`),
      this.knex.raw(`${SUMS.rateLimited} AS "rateLimited"`),
    ];
  }

  async deleteBefore(day: string): Promise<number> {
    return Number(await this.knex(T).where('day', '<', day).delete());
  }
}
