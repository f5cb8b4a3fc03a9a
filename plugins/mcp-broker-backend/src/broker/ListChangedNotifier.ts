/*
 * Sends list_changed notifications to every client GET stream open at the moment of sending
 * (and hands each one to `alsoDeliver`: the 2026-07-28 listen streams, so both eras hear of
 * every change at the same moment), at most once per `windowMs` per kind: the first change
 * goes out at once, changes during the window collapse into one trailing notification. A backend that floods events therefore
 * costs clients at most one notification per kind and window.
 */
import { LIST_CHANGED_METHOD, ListKind } from '../protocol/listKinds';
import type { ClientEventStream } from '../types';

/** Coalescing broadcaster of list_changed notifications. */
export class ListChangedNotifier {
  private readonly timers = new Map<ListKind, NodeJS.Timeout>();
  private readonly pending = new Set<ListKind>();
  private closed = false;

  constructor(
    private readonly windowMs: number,
    private readonly openStreams: () => ClientEventStream[],
    private readonly alsoDeliver: (kind: ListKind) => void = () => {},
  ) {}

  /** Announces that the clients' view of `kind` changed. */
  notify(kind: ListKind): void {
    if (this.closed) return;
    if (this.timers.has(kind)) {
      this.pending.add(kind);
      return;
    }
    this.broadcast(kind);
    this.startWindow(kind);
  }

  /** Stops all timers; later notifications are ignored. */
  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pending.clear();
  }

  private startWindow(kind: ListKind) {
    if (this.windowMs <= 0) return;
    const timer = setTimeout(() => {
      this.timers.delete(kind);
      if (this.pending.delete(kind)) {
        this.broadcast(kind);
        this.startWindow(kind);
      }
    }, this.windowMs);
    timer.unref();
    this.timers.set(kind, timer);
  }

  private broadcast(kind: ListKind) {
    const message = { jsonrpc: '2.0' as const, method: LIST_CHANGED_METHOD[kind] };
    for (const stream of this.openStreams()) stream.send(message);
    this.alsoDeliver(kind);
  }
}
