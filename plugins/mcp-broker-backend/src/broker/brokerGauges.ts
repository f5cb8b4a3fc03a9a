/* What the broker's gauges report, read from its status (sessions, streams, backend states). */
import type { BrokerStatus } from './McpBroker';
import type { BrokerGaugeSnapshot } from '../telemetry/BrokerMetrics';

/** The gauge readings of a broker status, and the number of tasks the replica watches. */
export function gaugeSnapshotOf(status: BrokerStatus, tasksWatched?: number): BrokerGaugeSnapshot {
  return {
    ...(tasksWatched === undefined ? {} : { tasksWatched }),
    sessions: status.clients.sessions,
    eventStreams: status.clients.eventStreams,
    listenStreams: status.clients.listenStreams,
    backends: status.backends.map(backend => ({ name: backend.name, state: backend.state })),
  };
}
