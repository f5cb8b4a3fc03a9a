/*
 * Turns the broker's usage rows (one per day, server and tool) into what the usage pages show:
 * the period's days, a series per server or tool, and totals per server and tool.
 */
import type { McpUsageDay } from '@devportal/plugin-mcp-broker-common';
import type { UsageChartSeries } from '../shared/UsageChart';

/** The choices of the period picker, in days. */
export const PERIODS = [7, 30, 90] as const;

/** Every UTC day from `from` to `to` (`YYYY-MM-DD`, inclusive), in order. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= end; at += 86_400_000) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

type Row = Pick<McpUsageDay, 'day' | 'calls' | 'errors' | 'rateLimited'>;

/** One series per value of `keyOf` (e.g. the server), summing `value` per day. */
export function seriesBy<T extends Row>(
  rows: T[],
  days: string[],
  keyOf: (row: T) => string,
  value: (row: T) => number,
): UsageChartSeries[] {
  const index = new Map(days.map((day, i) => [day, i]));
  const byKey = new Map<string, number[]>();
  for (const row of rows) {
    const i = index.get(row.day);
    if (i === undefined) continue;
    const key = keyOf(row);
    const values = byKey.get(key) ?? days.map(() => 0);
    values[i] += value(row);
    byKey.set(key, values);
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, values]) => ({ name, values }));
}

/** One series summing `value` over every row per day. */
export function totalSeries<T extends Row>(
  name: string,
  rows: T[],
  days: string[],
  value: (row: T) => number,
): UsageChartSeries {
  return { name, values: seriesBy(rows, days, () => name, value)[0]?.values ?? days.map(() => 0) };
}

/** The counters of one group of rows. */
export interface UsageTotals {
  calls: number;
  errors: number;
  rateLimited: number;
}

/**
 * Totals per group, by calls descending: `keyOf` names a row's group by its parts (e.g.
 * `{server, tool}`), which every total carries, with an `id` unique to the group.
 */
export function totalsBy<T extends Row, Key extends Record<string, string>>(
  rows: T[],
  keyOf: (row: T) => Key,
): Array<Key & UsageTotals & { id: string }> {
  const totals = new Map<string, Key & UsageTotals & { id: string }>();
  for (const row of rows) {
    const key = keyOf(row);
    // JSON of the parts: no separator character a server or tool name could contain.
    const id = JSON.stringify(Object.values(key));
    const total = totals.get(id) ?? { ...key, id, calls: 0, errors: 0, rateLimited: 0 };
    total.calls += row.calls;
    total.errors += row.errors;
    total.rateLimited += row.rateLimited;
    totals.set(id, total);
  }
  return [...totals.values()].sort((a, b) => b.calls - a.calls || a.id.localeCompare(b.id));
}

/** A quota window in words: 60,000 ms → "minute", 86,400,000 → "day (UTC)". */
export function windowText(windowMs: number): string {
  if (windowMs === 60_000) return 'minute';
  if (windowMs === 3_600_000) return 'hour';
  if (windowMs === 86_400_000) return 'day (UTC)';
  return `${Math.round(windowMs / 1000).toLocaleString('en')} s`;
}
