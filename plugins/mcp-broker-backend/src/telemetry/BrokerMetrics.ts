/*
 * The broker's metric instruments, made once from a Meter (the global MeterProvider by default:
 * whatever the deployment registered, as Backstage's telemetry guide sets it up; without one the
 * OpenTelemetry API hands out no-op instruments and this costs next to nothing).
 *
 * - `mcp.server.operation.duration` and `mcp.client.operation.duration` (semantic conventions
 *   for MCP): histograms in seconds of client requests to the broker and of the broker's
 *   requests to backends, with the conventions' bucket boundaries.
 * - Gauges, read when a reader collects (nothing on the request path): client sessions, open
 *   client streams (session GET and 2026-07-28 listen), each backend's connection state (1 for
 *   its current state, 0 for the others, so a dashboard sees a state end), calls in flight,
 *   tasks this replica watches (holds the lease of, contract tasks-and-apps §2.10).
 * - Counters: denials (by permission), rate-limit refusals, relayed cancellations, task status
 *   notifications sent to clients (by the client's era).
 *
 * Attribute values are bounded (telemetryAttributes.ts); callers pass them ready-made.
 */
import {
  metrics,
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableGauge,
  type ObservableUpDownCounter,
  type BatchObservableCallback,
} from '@opentelemetry/api';
import { Attr, type AppCallResolution, type Era } from './telemetryAttributes';

/** The instrumentation scope of every instrument (the package's name). */
export const METER_NAME = '@devportal/plugin-mcp-broker-backend';

/** Metric names, for readers and documentation. */
export const MetricName = {
  serverOperationDuration: 'mcp.server.operation.duration',
  clientOperationDuration: 'mcp.client.operation.duration',
  sessions: 'mcp_broker.client.sessions',
  streams: 'mcp_broker.client.streams',
  backendState: 'mcp_broker.backend.state',
  callsInFlight: 'mcp_broker.calls.in_flight',
  denials: 'mcp_broker.denials',
  rateLimitRefusals: 'mcp_broker.rate_limit.refusals',
  relayedCancellations: 'mcp_broker.cancellations.relayed',
  appCalls: 'mcp_broker.app_calls',
  tasksWatched: 'mcp_broker.tasks.watched',
  taskNotificationsSent: 'mcp_broker.task_notifications.sent',
  tasksCreated: 'mcp_broker.tasks.created',
  tasksEnded: 'mcp_broker.tasks.ended',
  taskLimitRefusals: 'mcp_broker.task_limit.refusals',
} as const;

/** Bucket boundaries (seconds) the semantic conventions advise for MCP operation durations. */
export const OPERATION_DURATION_BUCKETS_S = [
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
];

/** Every state a backend connection can be in (the status endpoint's words). */
export const BACKEND_STATES = [
  'connecting',
  'connected',
  'backing-off',
  'failed',
  'closed',
] as const;

/** What the gauges read from the broker when a reader collects. */
export interface BrokerGaugeSnapshot {
  /** Client sessions served by this replica. */
  sessions: number;
  /** Open session GET streams on this replica. */
  eventStreams: number;
  /** Open 2026-07-28 `subscriptions/listen` streams on this replica. */
  listenStreams: number;
  /** Each configured backend and its connection state. */
  backends: ReadonlyArray<{ name: string; state: string }>;
  /** Tasks this replica holds the watcher's lease of (absent: not reported). */
  tasksWatched?: number;
}

const ERAS: readonly Era[] = ['legacy', 'modern'];

/** Calls in flight by (server, era): kept here, read by the gauge. */
type InFlightKey = `${string}\u0000${Era}`;

/** The broker's instruments; see the file comment. */
export class BrokerMetrics {
  readonly #serverDuration: Histogram;
  readonly #clientDuration: Histogram;
  readonly #denials: Counter;
  readonly #rateLimitRefusals: Counter;
  readonly #relayedCancellations: Counter;
  readonly #appCalls: Counter;
  readonly #taskNotificationsSent: Counter;
  readonly #tasksCreated: Counter;
  readonly #tasksEnded: Counter;
  readonly #taskLimitRefusals: Counter;
  readonly #meter: Meter;
  readonly #gauges: {
    sessions: ObservableUpDownCounter;
    streams: ObservableUpDownCounter;
    backendState: ObservableGauge;
    callsInFlight: ObservableUpDownCounter;
    tasksWatched: ObservableUpDownCounter;
  };
  readonly #inFlight = new Map<InFlightKey, number>();
  #snapshot: (() => BrokerGaugeSnapshot) | undefined;
  readonly #collect: BatchObservableCallback;

  /** Instruments from `meterProvider` (default: the global one). */
  static create(meterProvider: MeterProvider = metrics.getMeterProvider()): BrokerMetrics {
    return new BrokerMetrics(meterProvider.getMeter(METER_NAME));
  }

  private constructor(meter: Meter) {
    this.#meter = meter;
    const duration = {
      unit: 's',
      advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS_S },
    };
    this.#serverDuration = meter.createHistogram(MetricName.serverOperationDuration, {
      ...duration,
      description: 'MCP requests from clients, from their arrival until the broker answered them',
    });
    this.#clientDuration = meter.createHistogram(MetricName.clientOperationDuration, {
      ...duration,
      description:
        'MCP requests the broker sent to backend servers, until their answer (or failure)',
    });
    this.#denials = meter.createCounter(MetricName.denials, {
      unit: '{request}',
      description: 'Requests refused by a permission (mcp-broker.* permissions)',
    });
    this.#rateLimitRefusals = meter.createCounter(MetricName.rateLimitRefusals, {
      unit: '{call}',
      description: 'Requests refused by mcpBroker.rateLimits',
    });
    this.#relayedCancellations = meter.createCounter(MetricName.relayedCancellations, {
      unit: '{cancellation}',
      description: "Clients' cancellations the broker passed on to a backend",
    });
    this.#appCalls = meter.createCounter(MetricName.appCalls, {
      unit: '{call}',
      description:
        "MCP Apps' tool calls by their server's own tool name, by how the broker resolved them",
    });
    this.#taskNotificationsSent = meter.createCounter(MetricName.taskNotificationsSent, {
      unit: '{notification}',
      description: 'Task status notifications sent to client streams',
    });
    this.#tasksCreated = meter.createCounter(MetricName.tasksCreated, {
      unit: '{task}',
      description: 'Tasks created through the broker (contract tasks-and-apps §2.14)',
    });
    this.#tasksEnded = meter.createCounter(MetricName.tasksEnded, {
      unit: '{task}',
      description: 'Tasks seen ending, once each, by the terminal status they ended with',
    });
    this.#taskLimitRefusals = meter.createCounter(MetricName.taskLimitRefusals, {
      unit: '{call}',
      description: 'Task-creating calls refused by mcpBroker.tasks.perPerson',
    });
    this.#gauges = {
      sessions: meter.createObservableUpDownCounter(MetricName.sessions, {
        unit: '{session}',
        description: 'Client sessions (2025-11-25 era) served by this replica',
      }),
      streams: meter.createObservableUpDownCounter(MetricName.streams, {
        unit: '{stream}',
        description: 'Open client streams on this replica: session GET and 2026-07-28 listen',
      }),
      backendState: meter.createObservableGauge(MetricName.backendState, {
        unit: '1',
        description: "1 for each backend's current connection state, 0 for its other states",
      }),
      callsInFlight: meter.createObservableUpDownCounter(MetricName.callsInFlight, {
        unit: '{call}',
        description: 'Tool calls in flight on this replica',
      }),
      tasksWatched: meter.createObservableUpDownCounter(MetricName.tasksWatched, {
        unit: '{task}',
        description: 'Tasks this replica watches (polls for the people listening to them)',
      }),
    };
    this.#collect = observer => {
      const snapshot = this.#snapshot?.();
      // Every configured backend reports its calls in flight, 0 included (a series that drops
      // out reads as "unknown", not "none"); a removed one only while it still has some.
      const inFlight = new Map(this.#inFlight);
      for (const backend of snapshot?.backends ?? []) {
        for (const era of ERAS)
          inFlight.set(
            `${backend.name}\u0000${era}`,
            inFlight.get(`${backend.name}\u0000${era}`) ?? 0,
          );
      }
      for (const [key, count] of inFlight) {
        const [server, era] = key.split('\u0000');
        observer.observe(this.#gauges.callsInFlight, count, {
          [Attr.server]: server,
          [Attr.era]: era,
        });
      }
      if (snapshot === undefined) return;
      observer.observe(this.#gauges.sessions, snapshot.sessions);
      if (snapshot.tasksWatched !== undefined) {
        observer.observe(this.#gauges.tasksWatched, snapshot.tasksWatched);
      }
      observer.observe(this.#gauges.streams, snapshot.eventStreams, {
        [Attr.streamKind]: 'session-get',
      });
      observer.observe(this.#gauges.streams, snapshot.listenStreams, {
        [Attr.streamKind]: 'listen',
      });
      for (const backend of snapshot.backends) {
        for (const state of BACKEND_STATES) {
          observer.observe(this.#gauges.backendState, backend.state === state ? 1 : 0, {
            [Attr.server]: backend.name,
            [Attr.backendState]: state,
          });
        }
      }
    };
    meter.addBatchObservableCallback(this.#collect, Object.values(this.#gauges));
  }

  /** Where the gauges read the broker's state (sessions, streams, backends) from. */
  observe(snapshot: () => BrokerGaugeSnapshot): void {
    this.#snapshot = snapshot;
  }

  /** Stops observing (the broker is gone); the instruments stay valid. */
  close(): void {
    this.#snapshot = undefined;
    this.#meter.removeBatchObservableCallback(this.#collect, Object.values(this.#gauges));
  }

  /** A client request took `seconds`. */
  recordServerOperation(seconds: number, attributes: Attributes): void {
    this.#serverDuration.record(seconds, attributes);
  }

  /** A backend request took `seconds`. */
  recordClientOperation(seconds: number, attributes: Attributes): void {
    this.#clientDuration.record(seconds, attributes);
  }

  /** A tool call to `server` began (+1) or ended (−1). */
  callInFlight(server: string, era: Era, delta: 1 | -1): void {
    const key: InFlightKey = `${server}\u0000${era}`;
    const count = (this.#inFlight.get(key) ?? 0) + delta;
    if (count > 0) this.#inFlight.set(key, count);
    else this.#inFlight.delete(key);
  }

  /** A request was refused by `permission` (its name, e.g. `mcp-broker.tool.use`). */
  denied(method: string, permission: string, server?: string): void {
    this.#denials.add(1, {
      [Attr.methodName]: method,
      [Attr.permission]: permission,
      ...(server === undefined ? {} : { [Attr.server]: server }),
    });
  }

  /**
   * A tool call to `server` was refused by a rate limit: the admin's (`config`) or a person's
   * plan (`plan`, contract mcp-access §7.4; never the person or the grant).
   */
  rateLimited(server: string, era: Era, limitSource: 'config' | 'plan'): void {
    this.#rateLimitRefusals.add(1, {
      [Attr.server]: server,
      [Attr.era]: era,
      [Attr.limitSource]: limitSource,
    });
  }

  /**
   * An app called a tool by its server's own name (contract tasks-and-apps §3.6), resolved as
   * `resolution`; `server` when one was found.
   */
  appCall(resolution: AppCallResolution, server?: string): void {
    this.#appCalls.add(1, {
      [Attr.appCallResolution]: resolution,
      ...(server === undefined ? {} : { [Attr.server]: server }),
    });
  }

  /** A task status notification was sent to a client stream of era `era`. */
  taskNotificationSent(era: Era): void {
    this.#taskNotificationsSent.add(1, { [Attr.era]: era });
  }

  /** A task was created at `server` (of `backendEra`) for a client of `era`. */
  taskCreated(server: string, era: Era, backendEra: Era): void {
    this.#tasksCreated.add(1, {
      [Attr.server]: server,
      [Attr.era]: era,
      [Attr.backendEra]: backendEra,
    });
  }

  /** A task of `server` was first seen in the terminal `status` (counted once per task). */
  taskEnded(server: string, status: string): void {
    this.#tasksEnded.add(1, { [Attr.server]: server, [Attr.taskStatus]: status });
  }

  /** A task-creating call to `server` was refused by the per-person bound of open tasks. */
  taskLimitRefused(server: string): void {
    this.#taskLimitRefusals.add(1, { [Attr.server]: server });
  }

  /**
   * A client's cancellation reached `server`'s call: from the replica that holds it (`client`)
   * or through the shared store from another replica (`replica`).
   */
  cancellationRelayed(server: string, source: 'client' | 'replica'): void {
    this.#relayedCancellations.add(1, {
      [Attr.server]: server,
      [Attr.cancellationSource]: source,
    });
  }
}
