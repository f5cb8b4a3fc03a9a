/*
 * Test helper: live backends by name, each with its channels over the real HTTP transport (what
 * BackendConnection gives the calls in the broker), without a connection loop.
 */
import type { BackendChannels } from '../backendChannels';
import { channelsFor } from '../backendChannels';
import type { BackendEndpoint } from '../backendTransport';

/** A set of backends for the call machinery's tests. */
export interface TestBackends {
  /** Adds (or replaces) a backend and returns its channels. */
  add(endpoint: BackendEndpoint): BackendChannels;
  get(name: string): BackendChannels | undefined;
  all(): Iterable<BackendChannels>;
  /** Ends `owner`'s backend sessions with every backend. */
  closeSessionsOf(owner: string): Promise<void>;
  /** Ends every backend session (what closing the connections does in the broker). */
  close(): Promise<void>;
}

/** Builds a {@link TestBackends} whose requests time out after `requestTimeoutMs`. */
export function testBackends(requestTimeoutMs = 5_000): TestBackends {
  const backends = new Map<string, BackendChannels>();
  return {
    add(endpoint) {
      const channels = channelsFor(endpoint, requestTimeoutMs);
      backends.set(endpoint.name, channels);
      return channels;
    },
    get: name => backends.get(name),
    all: () => backends.values(),
    async closeSessionsOf(owner) {
      await Promise.all([...backends.values()].map(b => b.legacy.closeSessionOf(owner)));
    },
    async close() {
      await Promise.all([...backends.values()].map(b => b.legacy.closeSessions()));
    },
  };
}

const channelsByEndpoint = new WeakMap<BackendEndpoint, BackendChannels>();

/** The channels of `endpoint` (the same object for the same endpoint object). */
export function channelsOf(endpoint: BackendEndpoint, requestTimeoutMs = 5_000): BackendChannels {
  let channels = channelsByEndpoint.get(endpoint);
  if (channels === undefined) {
    channels = channelsFor(endpoint, requestTimeoutMs);
    channelsByEndpoint.set(endpoint, channels);
  }
  return channels;
}
