/*
 * BackendEventStream: how the broker's own connection to one backend learns of its list
 * changes, for one connection attempt after the backend is connected and listed
 * (BackendConnection runs it, and owns the session, the lists and the reconnect loop).
 *
 *   - a backend that advertises no list_changed kind: nothing to hear, the attempt stays up
 *     until it is abandoned (mode `none`);
 *   - a legacy (2025-11-25) backend: the session's GET event stream (405 → re-list every
 *     pollInterval instead, mode `polling`); requests the backend sends on it are answered by
 *     the connection (the broker's own session relays none);
 *   - a modern (2026-07-28) backend: a `subscriptions/listen` stream for the advertised kinds,
 *     acknowledged first; the acknowledged kinds are what its events are validated against (a
 *     backend without listen is polled).
 * The stream must open within `openTimeoutMs` (the GET stream's headers, the listen stream's
 * acknowledgement; mode `opening` meanwhile), or the attempt fails. Once it is up (open,
 * polling or none) the connection hears `onUp` (its stable period starts); when it breaks or the
 * backend ends it, `watch` rejects with a `connection-lost` BackendError and the connection
 * reconnects. Outside `watch` the mode is `down`.
 *
 * Events are validated (eventValidation.ts; invalid ones are counted and logged, never relayed)
 * and bursts are coalesced: at most one re-list runs and one is pending — while a re-list runs or
 * waits, further events only mark their kind dirty (and are counted as coalesced on `/status`) —
 * and re-lists start at least `minRelistIntervalMs` apart, so a backend that floods
 * `list_changed` (1,000 a second) is re-listed a few times a second at most. Those re-lists
 * outlive the attempt that heard the events; they end with the connection (`lifetime`).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { classifyJsonRpc, JsonRpcMessage } from '../protocol/jsonRpc';
import { advertisedListKinds, ListKind } from '../protocol/listKinds';
import type { ActiveSession } from './activeSession';
import { BackendError, describeFailure } from './backendErrors';
import type { BackendStreamItem } from './backendTransport';
import { validateListChangedEvent } from './eventValidation';
import type { LegacyChannel, LegacySession } from './LegacyChannel';
import type { ModernChannel } from './ModernChannel';
import { sleep } from './sleep';
import type { BackendMisbehaviours } from './BackendMisbehaviours';

/**
 * How the broker learns of a backend's list changes; `opening` while it waits (at most
 * `eventStreamOpenMs`) for a GET stream's headers or a listen stream's acknowledgement.
 */
export type EventStreamMode = 'open' | 'opening' | 'polling' | 'none' | 'down';

/** Options of a {@link BackendEventStream}. */
export interface BackendEventStreamOptions {
  /** The backend's name, for errors and logs. */
  backendName: string;
  /** The backend's 2025-11-25 channel (the GET event stream). */
  legacy: LegacyChannel;
  /** The backend's 2026-07-28 channel (`subscriptions/listen`). */
  modern: ModernChannel;
  logger: LoggerService;
  /** How often a backend without an event stream is re-listed. */
  pollIntervalMs: number;
  /** How long the GET stream's headers or the listen stream's acknowledgement may take. */
  openTimeoutMs: number;
  /** Aborts when the connection closes: ends the re-lists that events started. */
  lifetime: AbortSignal;
  /** The next JSON-RPC id of the broker's own requests to this backend (one sequence). */
  nextRequestId(): number;
  /** Re-lists the backend and tells the owner what changed (`eventKinds`: what events said). */
  relist(
    session: ActiveSession,
    signal: AbortSignal,
    eventKinds: ReadonlySet<ListKind>,
  ): Promise<void>;
  /** Answers a request a legacy backend sent on its event stream. */
  answerServerRequest(message: JsonRpcMessage, session: LegacySession): void;
  /** The event connection is up (open, polling or none): the attempt counts as healthy so far. */
  onUp(): void;
  /** Shortest time between the starts of two re-lists that events asked for. */
  minRelistIntervalMs: number;
  /** Where malformed and oversized events and coalesced ones are counted. */
  misbehaviours: BackendMisbehaviours;
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** The event connection of one backend connection; see the file comment. */
export class BackendEventStream {
  private currentMode: EventStreamMode = 'down';
  private lastEvent?: number;
  private dropped = 0;
  private readonly pendingEventKinds = new Set<ListKind>();
  private refreshing?: Promise<void>;
  private lastRelistStartedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: BackendEventStreamOptions) {}

  /** How the broker hears of list changes right now (`down` between attempts). */
  get mode(): EventStreamMode {
    return this.currentMode;
  }

  /** When the last valid event arrived (epoch ms), if any did. */
  get lastEventAt(): number | undefined {
    return this.lastEvent;
  }

  /** How many events were dropped as invalid or foreign. */
  get droppedEvents(): number {
    return this.dropped;
  }

  /**
   * Listens for `session`'s list changes until `signal` aborts (resolves) or the stream breaks
   * or ends (rejects with a `connection-lost` BackendError; a stream that does not open in time
   * rejects with the channel's error).
   */
  async watch(session: ActiveSession, signal: AbortSignal): Promise<void> {
    try {
      await this.watchSession(session, signal);
    } finally {
      this.currentMode = 'down';
    }
  }

  private async watchSession(session: ActiveSession, signal: AbortSignal): Promise<void> {
    const advertised = advertisedListKinds(session.capabilities);
    if (session.era === 'modern') advertised.delete('roots'); // gone from 2026-07-28
    if (advertised.size === 0) {
      this.up('none');
      await waitForAbort(signal);
      return;
    }
    if (session.era === 'modern') {
      await this.listenModern(session, advertised, signal);
      return;
    }
    this.currentMode = 'opening';
    const stream = await this.options.legacy.openEventStream(
      session,
      signal,
      this.options.openTimeoutMs,
    );
    if (stream === 'not-supported') {
      await this.poll(session, signal);
      return;
    }
    this.up('open');
    const name = this.options.backendName;
    try {
      for await (const item of stream) {
        if (signal.aborted) break;
        this.onStreamItem(item, session, advertised);
      }
    } catch (error) {
      if (!signal.aborted) {
        throw new BackendError(
          name,
          'connection-lost',
          `the event stream of MCP server "${name}" broke`,
          { statusDetail: this.describeStreamBreak(error) },
        );
      }
    } finally {
      stream.close();
    }
    if (!signal.aborted) {
      throw new BackendError(
        name,
        'connection-lost',
        `MCP server "${name}" closed its event stream`,
        {
          statusDetail: 'event stream closed',
        },
      );
    }
  }

  /** Re-lists every pollInterval until `signal` aborts (a backend without an event stream). */
  private async poll(session: ActiveSession, signal: AbortSignal): Promise<void> {
    this.up('polling');
    while (!signal.aborted) {
      await sleep(this.options.pollIntervalMs, signal);
      if (!signal.aborted) await this.options.relist(session, signal, new Set());
    }
  }

  /**
   * A modern backend's change events: a `subscriptions/listen` stream for the kinds it
   * advertised; the acknowledged kinds are what its events are validated against.
   */
  private async listenModern(
    session: ActiveSession,
    advertised: ReadonlySet<ListKind>,
    signal: AbortSignal,
  ): Promise<void> {
    let honoured: ReadonlySet<ListKind> = new Set();
    this.currentMode = 'opening';
    const end = await this.options.modern.listen(
      this.options.nextRequestId(),
      advertised,
      signal,
      {
        onAcknowledged: kinds => {
          honoured = kinds;
          this.up('open');
        },
        onEvent: item => this.onStreamItem(item, session, honoured),
        onForeignEvent: reason => this.dropEvent(reason),
      },
      this.options.openTimeoutMs,
    );
    if (end === 'not-supported') {
      await this.poll(session, signal);
      return;
    }
    if (!signal.aborted) {
      const name = this.options.backendName;
      const detail =
        end === 'completed' ? 'ended its subscriptions/listen stream' : 'event stream closed';
      throw new BackendError(name, 'connection-lost', `MCP server "${name}" ${detail}`, {
        statusDetail: detail,
      });
    }
  }

  /** The event connection is up (in `mode`); the owner starts its stable period. */
  private up(mode: Exclude<EventStreamMode, 'opening' | 'down'>) {
    this.currentMode = mode;
    this.options.onUp();
  }

  /** What `/status` says about an event stream that broke while being read (counted if too large). */
  private describeStreamBreak(error: unknown): string {
    if ((error as { failure?: unknown })?.failure === 'too-large') {
      this.options.misbehaviours.record('oversizedMessages');
      return 'the event stream sent an event larger than the broker accepts';
    }
    return 'event stream closed';
  }

  private dropEvent(reason: string) {
    this.dropped++;
    this.options.logger.warn(
      `MCP backend ${this.options.backendName}: dropped an event (${reason})`,
    );
  }

  private onStreamItem(
    item: BackendStreamItem,
    session: ActiveSession,
    advertised: ReadonlySet<ListKind>,
  ) {
    if (item.type === 'malformed') {
      if (item.reason === undefined) this.options.misbehaviours.record('malformedMessages');
      this.dropEvent(item.reason ?? 'data is not JSON');
      return;
    }
    const parsed = classifyJsonRpc(item.parsed.message);
    if (parsed?.kind === 'request' && session.era === 'legacy') {
      this.options.answerServerRequest(parsed.message, session);
      if (parsed.message.method === 'ping') return;
    }
    const validation = validateListChangedEvent(item.parsed.text, advertised);
    if (!validation.ok) {
      this.dropEvent(validation.reason);
      return;
    }
    this.lastEvent = Date.now();
    this.pendingEventKinds.add(validation.kind);
    if (this.refreshing !== undefined) this.options.misbehaviours.record('coalescedListChanged');
    this.refreshing ??= this.drainRefreshes(session).finally(() => {
      this.refreshing = undefined;
    });
  }

  /**
   * Coalesces bursts: one refresh at a time, at least `minRelistIntervalMs` after the previous
   * one began, then one more for everything that arrived meanwhile.
   */
  private async drainRefreshes(session: ActiveSession): Promise<void> {
    const { lifetime, minRelistIntervalMs } = this.options;
    while (this.pendingEventKinds.size > 0 && !lifetime.aborted) {
      const wait = this.lastRelistStartedAt + minRelistIntervalMs - Date.now();
      if (wait > 0) await sleep(wait, lifetime);
      if (lifetime.aborted) break;
      this.lastRelistStartedAt = Date.now();
      const kinds = new Set(this.pendingEventKinds);
      this.pendingEventKinds.clear();
      try {
        await this.options.relist(session, lifetime, kinds);
      } catch (error) {
        this.options.logger.warn(
          `MCP backend ${this.options.backendName}: re-listing after an event failed: ${describeFailure(error)}`,
        );
      }
    }
  }
}
