/*
 * Counts tool calls per (UTC day, principal, server, tool) in memory and flushes the counts to
 * the UsageStore (docs/contracts/mcp-access.md §7.1–§7.2). One per replica.
 *
 * - The call path only adds to a Map entry: no database call per tool call.
 * - A flush (every `flushIntervalMs`, and a last one at shutdown, bounded by
 *   FINAL_FLUSH_TIMEOUT_MS) writes what is pending in one all-or-nothing write, then subtracts
 *   exactly what it wrote, so increments that arrived meanwhile stay pending. One flush runs at
 *   a time; a flush asked for meanwhile waits for the running one and then runs.
 * - A failed flush keeps everything for the next one (the store's write is all or nothing, so
 *   nothing is counted twice); it is logged once per episode of failures, and counted.
 * - Memory is bounded: at most `maxPendingKeys` keys are pending. Beyond that, increments for a
 *   new key are dropped and counted; existing keys keep counting.
 * - A crash loses at most what was pending: one flush interval of this replica's counts (more
 *   while flushes fail).
 *
 * Metrics (no user ids): `mcp_broker.usage.flush.rows`, `mcp_broker.usage.flush.failures`,
 * `mcp_broker.usage.dropped`, all without attributes.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { metrics, type Counter, type Meter } from '@opentelemetry/api';
import { METER_NAME } from '../telemetry/BrokerMetrics';
import { utcDay, type UsageCounters, type UsageRow, type UsageStore } from './UsageStore';

/** The most keys pending between flushes (contract §7.2). */
export const DEFAULT_MAX_PENDING_USAGE_KEYS = 200_000;
/** How long the shutdown's last flush may take. */
export const FINAL_FLUSH_TIMEOUT_MS = 5_000;
/** The longest tool name kept (longer ones are cut). */
const MAX_TOOL_LENGTH = 255;

/** How a counted tool call ended. */
export type UsageOutcome = 'succeeded' | 'failed' | 'rate-limited';

/** What a counted tool call was. */
export interface UsageCall {
  /** A user entity ref (lower case) or `service:<subject>`. */
  principal: string;
  server: string;
  /** The backend's own tool name. */
  tool: string;
}

/** Metric names of the recorder. */
export const UsageMetricName = {
  flushRows: 'mcp_broker.usage.flush.rows',
  flushFailures: 'mcp_broker.usage.flush.failures',
  dropped: 'mcp_broker.usage.dropped',
} as const;

/** Options of {@link UsageRecorder.create}. */
export interface UsageRecorderOptions {
  store: UsageStore;
  logger: LoggerService;
  /** `mcpBroker.usage.flushInterval`. */
  flushIntervalMs: number;
  maxPendingKeys?: number;
  /** Where the metrics go; default the global meter provider's broker meter. */
  meter?: Meter;
  now?: () => number;
}

type Pending = UsageRow;

/** See the file comment. */
export class UsageRecorder {
  readonly #store: UsageStore;
  readonly #logger: LoggerService;
  readonly #flushIntervalMs: number;
  readonly #maxPendingKeys: number;
  readonly #now: () => number;
  readonly #pending = new Map<string, Pending>();
  readonly #flushedRows: Counter;
  readonly #flushFailures: Counter;
  readonly #dropped: Counter;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #failing = false;

  static create(options: UsageRecorderOptions): UsageRecorder {
    return new UsageRecorder(options);
  }

  private constructor(options: UsageRecorderOptions) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#flushIntervalMs = options.flushIntervalMs;
    this.#maxPendingKeys = options.maxPendingKeys ?? DEFAULT_MAX_PENDING_USAGE_KEYS;
    this.#now = options.now ?? Date.now;
    const meter = options.meter ?? metrics.getMeterProvider().getMeter(METER_NAME);
    this.#flushedRows = meter.createCounter(UsageMetricName.flushRows, {
      description: 'Usage rows written to the database',
    });
    this.#flushFailures = meter.createCounter(UsageMetricName.flushFailures, {
      description: 'Usage flushes that failed (their counts are kept for the next one)',
    });
    this.#dropped = meter.createCounter(UsageMetricName.dropped, {
      description: 'Usage increments dropped because too many keys were pending',
    });
  }

  /** Counts one tool call that ended with `outcome` (a refused call: `rate-limited`). */
  record(call: UsageCall, outcome: UsageOutcome): void {
    const day = utcDay(this.#now());
    const tool = call.tool.slice(0, MAX_TOOL_LENGTH);
    const key = `${day}\u0000${call.principal}\u0000${call.server}\u0000${tool}`;
    let entry = this.#pending.get(key);
    if (entry === undefined) {
      if (this.#pending.size >= this.#maxPendingKeys) {
        this.#dropped.add(1);
        return;
      }
      entry = { day, principal: call.principal, server: call.server, tool, ...zero() };
      this.#pending.set(key, entry);
    }
    if (outcome === 'rate-limited') {
      entry.rateLimited += 1;
      return;
    }
    entry.calls += 1;
    if (outcome === 'failed') entry.errors += 1;
  }

  /** How many keys are pending (bounded by `maxPendingKeys`). */
  pendingKeys(): number {
    return this.#pending.size;
  }

  /** Flushes every `flushIntervalMs` until {@link UsageRecorder.close} (timer unref'd). */
  start(): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => void this.flush(), this.#flushIntervalMs);
    this.#timer.unref();
  }

  /**
   * Writes what is pending (see the file comment). Resolves when written or failed; never
   * rejects (a failure keeps the counts and is logged).
   */
  flush(): Promise<void> {
    const running = this.#flushing;
    const next = (running ?? Promise.resolve()).then(() => this.#flushOnce());
    const flushing = next.finally(() => {
      if (this.#flushing === flushing) this.#flushing = undefined;
    });
    this.#flushing = flushing;
    return flushing;
  }

  /** Stops the timer and runs a last flush, bounded by FINAL_FLUSH_TIMEOUT_MS. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    let timeout: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>(resolve => {
      timeout = setTimeout(() => resolve('expired'), FINAL_FLUSH_TIMEOUT_MS);
      timeout.unref();
    });
    const outcome = await Promise.race([this.flush(), expired]);
    clearTimeout(timeout);
    if (outcome === 'expired' || this.#pending.size > 0) {
      this.#logger.warn(
        `MCP broker: usage of ${this.#pending.size} (day, person, server, tool) keys was not written at shutdown`,
      );
    }
  }

  async #flushOnce(): Promise<void> {
    if (this.#pending.size === 0) return;
    const written = [...this.#pending.entries()].map(([key, row]) => ({ key, row: { ...row } }));
    try {
      await this.#store.add(written.map(entry => entry.row));
    } catch (error) {
      this.#flushFailures.add(1);
      if (!this.#failing) {
        this.#failing = true;
        this.#logger.warn(
          `MCP broker: could not write usage counts (kept for the next flush): ${error}`,
        );
      }
      return;
    }
    if (this.#failing) {
      this.#failing = false;
      this.#logger.info('MCP broker: usage counts are written again');
    }
    this.#flushedRows.add(written.length);
    for (const { key, row } of written) {
      const entry = this.#pending.get(key)!;
      subtract(entry, row);
      if (entry.calls === 0 && entry.errors === 0 && entry.rateLimited === 0)
        this.#pending.delete(key);
    }
  }
}

function zero(): UsageCounters {
  return { calls: 0, errors: 0, rateLimited: 0 };
}

function subtract(entry: UsageCounters, written: UsageCounters): void {
  entry.calls -= written.calls;
  entry.errors -= written.errors;
  entry.rateLimited -= written.rateLimited;
}
