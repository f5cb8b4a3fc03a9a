/*
 * Small statistics and table helpers shared by the benchmark scripts: percentiles of
 * sample arrays, millisecond formatting and Markdown tables (so a run's output can be
 * pasted into docs/benchmarks.md as it is).
 */

/** The p-th percentile (0–100) of `samples`, nearest-rank; NaN for no samples. */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The median of `values` (the mean of the two middle ones for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** min, p50, p99 and max of a sample array (milliseconds in, milliseconds out). */
export function summarize(samples) {
  return {
    n: samples.length,
    min: samples.length === 0 ? Number.NaN : Math.min(...samples),
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.length === 0 ? Number.NaN : Math.max(...samples),
  };
}

/** Milliseconds with a precision that suits their size. */
export function ms(value) {
  if (!Number.isFinite(value)) return '–';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return value.toFixed(0);
}

/** A ratio such as `1.07×`. */
export function ratio(value, base) {
  if (!Number.isFinite(value) || !Number.isFinite(base) || base === 0) return '–';
  return `${(value / base).toFixed(2)}×`;
}

/** A whole number with thousands separators (`100,000`). */
export function count(value) {
  return Number(value).toLocaleString('en-US');
}

/** A Markdown table from a header row and body rows (cells are stringified). */
export function markdownTable(header, rows) {
  const line = cells => `| ${cells.map(cell => String(cell)).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
