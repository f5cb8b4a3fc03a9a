/*
 * The QuotaStore of the rate limits (src/rateLimits/RateLimiter.ts) on the plugin's database,
 * SQLite and PostgreSQL alike (migrations/20261201000000_rate_limits.js).
 *
 * A lease is ONE upsert on the window's row whose SET grants min(wanted, what is left) computed
 * from the row as it stands when the statement updates it: PostgreSQL serialises concurrent
 * upserts of one row (the second waits for the first and sees its result), SQLite runs one
 * statement at a time. So however many replicas lease at once, the grants of a window never add
 * up to more than its limit. The statement returns `last_grant`, the units it granted.
 *
 * Budgets are stored as a digest: the table holds no principal and its keys have one length.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { QuotaStore } from '../rateLimits/RateLimiter';
import { REPLICAS_TABLE } from './DatabaseReplicaPresenceStore';

/** Windows of every budget (see migrations/). */
export const RATE_WINDOWS_TABLE = 'mcp_broker_rate_windows';

const T = RATE_WINDOWS_TABLE;
/** What a lease grants, from the row before the update: min(wanted, limit − used), at least 0. */
const GRANT = `(CASE WHEN ${T}.used >= CAST(? AS integer) THEN 0
  WHEN ${T}.used + CAST(? AS integer) > CAST(? AS integer) THEN CAST(? AS integer) - ${T}.used
  ELSE CAST(? AS integer) END)`;
const LEASE_SQL = `INSERT INTO ${T} (budget, window_end, used, last_grant) VALUES (?, ?, ?, ?)
  ON CONFLICT (budget, window_end) DO UPDATE SET
    used = ${T}.used + ${GRANT},
    last_grant = ${GRANT}
  RETURNING last_grant`;
const RECORD_SQL = `INSERT INTO ${T} (budget, window_end, used, last_grant) VALUES (?, ?, ?, 0)
  ON CONFLICT (budget, window_end) DO UPDATE SET used = ${T}.used + excluded.used`;

/** The stored key of a budget (a digest: no principal in the table). */
export function budgetKey(budget: string): string {
  return createHash('sha256').update(budget).digest('base64url');
}

/** The rows a raw statement returned (PostgreSQL wraps them, better-sqlite3 does not). */
function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/** {@link QuotaStore} shared by every replica through the plugin's database. */
export class DatabaseQuotaStore implements QuotaStore {
  constructor(private readonly knex: Knex) {}

  async lease(budget: string, windowEnd: number, limit: number, wanted: number): Promise<number> {
    const first = Math.min(wanted, limit);
    const grant = [limit, wanted, limit, limit, wanted];
    const rows = rowsOf<{ last_grant: number | string }>(
      await this.knex.raw(LEASE_SQL, [
        budgetKey(budget),
        windowEnd,
        first,
        first,
        ...grant,
        ...grant,
      ]),
    );
    return Number(rows[0]?.last_grant ?? 0);
  }

  async record(budget: string, windowEnd: number, units: number): Promise<void> {
    await this.knex.raw(RECORD_SQL, [budgetKey(budget), windowEnd, units]);
  }

  async used(budget: string, windowEnd: number): Promise<number> {
    const row = await this.knex(RATE_WINDOWS_TABLE)
      .where({ budget: budgetKey(budget), window_end: windowEnd })
      .first('used');
    return Number(row?.used ?? 0);
  }

  async liveReplicas(now: number): Promise<number> {
    await this.knex(RATE_WINDOWS_TABLE).where('window_end', '<=', now).delete();
    const [{ live }] = await this.knex(REPLICAS_TABLE)
      .where('alive_until', '>', now)
      .count({ live: '*' });
    return Number(live);
  }
}
