/*
 * Where usage counts are kept (docs/contracts/mcp-access.md §7.2): rows of (UTC day, principal,
 * server, tool) with three counters. Writes are additive — a row's counters grow by what is
 * written, never are set — so replicas need no coordination, and one write is all or nothing, so
 * a recorder whose write failed may write the same counts again without counting twice.
 * Days are `YYYY-MM-DD` strings (UTC), which order like the dates they name.
 */

/** One row's counters: calls admitted, the admitted calls that failed, calls a limit refused. */
export interface UsageCounters {
  calls: number;
  errors: number;
  rateLimited: number;
}

/** The key of a usage row. */
export interface UsageKey {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /** A user entity ref (lower case) or `service:<subject>`. */
  principal: string;
  server: string;
  /** The backend's own tool name. */
  tool: string;
}

/** A usage row: its key and counters. */
export type UsageRow = UsageKey & UsageCounters;

/** Days `from` to `to`, inclusive (`YYYY-MM-DD`). */
export interface DayRange {
  from: string;
  to: string;
}

/** One server's totals over a range. */
export interface ServerTotals extends UsageCounters {
  server: string;
  /** Distinct principals with a row in the range. */
  people: number;
}

/** One principal's totals on one server over a range. */
export interface PersonTotals extends UsageCounters {
  principal: string;
  /** The last day with a row in the range. */
  lastDay: string;
}

/** Where a page of people starts: after this (calls descending, then principal). */
export interface PeoplePosition {
  calls: number;
  principal: string;
}

/** The usage rows; see the file comment. */
export interface UsageStore {
  /** Adds `rows` to the stored counters, all or nothing. */
  add(rows: readonly UsageRow[]): Promise<void>;
  /** A principal's rows in `range` (on one server when given), by day, server and tool. */
  rowsOf(principal: string, range: DayRange, server?: string): Promise<UsageRow[]>;
  /** Every server's totals in `range`, by server name. */
  serverTotals(range: DayRange): Promise<ServerTotals[]>;
  /** A server's counters per day and tool in `range`, by day and tool. */
  seriesOf(server: string, range: DayRange): Promise<Array<Omit<UsageRow, 'principal' | 'server'>>>;
  /**
   * Up to `limit` principals of a server in `range`, by calls descending then principal,
   * starting after `after`.
   */
  peopleOf(
    server: string,
    range: DayRange,
    limit: number,
    after?: PeoplePosition,
  ): Promise<PersonTotals[]>;
  /** Deletes the rows of days before `day`; resolves the number deleted. */
  deleteBefore(day: string): Promise<number>;
}

/** The UTC day of `ms` as `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The UTC day `days` days before the day of `ms` (0: that day). */
export function utcDayBefore(ms: number, days: number): string {
  const date = new Date(ms);
  date.setUTCDate(date.getUTCDate() - days);
  return utcDay(date.getTime());
}
