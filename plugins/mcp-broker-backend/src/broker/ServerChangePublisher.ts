/*
 * Publishes the broker's server changes on the events topic `mcp-broker` (contract mcp-access
 * §2.7), for the catalog module, which re-reads the server over REST on each event.
 *
 * After every rebuild of the broker's catalog (server set changed, a server re-listed) it
 * compares each server's description, without its connection state, with what it last
 * published: a new server is `server.added`, a gone one `server.removed`, a different one
 * `server.updated`. Per server at most one event every `debounceMs`; the state at the end of the
 * window wins, and a change that was undone within it publishes nothing.
 *
 * Guarantees: best effort, as in the portal — a failed publish is logged (no secret: the
 * payload names the server only) and never fails anything; the catalog's full sync repairs a
 * lost event. Each replica publishes what it sees itself, so one change yields up to one event
 * per replica; subscribers coalesce. `close()` clears every timer.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { EventsService } from '@backstage/plugin-events-node';
import {
  MCP_BROKER_EVENTS_TOPIC,
  type McpBrokerEventPayload,
  type McpServerDescription,
} from '@devportal/plugin-mcp-broker-common';

/** At most one event per server in this window (contract §2.7). */
export const SERVER_EVENT_DEBOUNCE_MS = 2_000;

/** Options of {@link ServerChangePublisher.create}. */
export interface ServerChangePublisherOptions {
  events: EventsService;
  logger: LoggerService;
  /** The current descriptions of every server (this replica's view). */
  describe: () => readonly McpServerDescription[];
  /** Default {@link SERVER_EVENT_DEBOUNCE_MS}. */
  debounceMs?: number;
}

/** What a description is compared by: everything but the connection state. */
function fingerprintOf(description: McpServerDescription): string {
  const { state: _state, ...offer } = description;
  return JSON.stringify(offer);
}

/** Turns catalog rebuilds into `mcp-broker` events, per server and debounced. */
export class ServerChangePublisher {
  readonly #options: ServerChangePublisherOptions;
  readonly #debounceMs: number;
  /** Fingerprints of the servers as last published (absent: published as removed, or never). */
  readonly #published = new Map<string, string>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #closed = false;

  /** Builds the publisher; call {@link ServerChangePublisher.check} after each catalog rebuild. */
  static create(options: ServerChangePublisherOptions): ServerChangePublisher {
    return new ServerChangePublisher(options);
  }

  private constructor(options: ServerChangePublisherOptions) {
    this.#options = options;
    this.#debounceMs = options.debounceMs ?? SERVER_EVENT_DEBOUNCE_MS;
  }

  /** Schedules an event for every server whose description differs from the one published. */
  check(): void {
    if (this.#closed) return;
    const current = this.#current();
    const names = new Set([...current.keys(), ...this.#published.keys()]);
    for (const name of names) {
      if (current.get(name) === this.#published.get(name) || this.#timers.has(name)) continue;
      const timer = setTimeout(() => this.#flush(name), this.#debounceMs);
      timer.unref();
      this.#timers.set(name, timer);
    }
  }

  /** Stops publishing and clears every timer. */
  close(): void {
    this.#closed = true;
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }

  #current(): Map<string, string> {
    return new Map(this.#options.describe().map(d => [d.server, fingerprintOf(d)]));
  }

  #flush(name: string): void {
    this.#timers.delete(name);
    if (this.#closed) return;
    const now = this.#current().get(name);
    const before = this.#published.get(name);
    if (now === before) return;
    let type: McpBrokerEventPayload['type'];
    if (before === undefined) type = 'server.added';
    else if (now === undefined) type = 'server.removed';
    else type = 'server.updated';
    if (now === undefined) this.#published.delete(name);
    else this.#published.set(name, now);
    const eventPayload: McpBrokerEventPayload = { type, server: { kind: 'server', name } };
    this.#options.events
      .publish({ topic: MCP_BROKER_EVENTS_TOPIC, eventPayload })
      .catch(error =>
        this.#options.logger.warn(
          `Could not publish ${type} of MCP server ${name} (the catalog's next full sync repairs it): ${error}`,
        ),
      );
  }
}
