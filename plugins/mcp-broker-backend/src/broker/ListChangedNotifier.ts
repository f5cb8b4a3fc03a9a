/*
 * Sends list_changed notifications to the client GET streams open at the moment of sending
 * whose viewer is in the change's audience (and hands each one to `alsoDeliver`: the 2026-07-28
 * listen streams, so both eras hear of every change at the same moment), at most once per
 * `windowMs` per kind: the first change goes out at once, changes during the window collapse
 * into one trailing notification to everyone in any of their audiences. A backend that floods
 * events therefore costs clients at most one notification per kind and window.
 */
import { LIST_CHANGED_METHOD, ListKind } from '../protocol/listKinds';
import type { ClientEventStream } from '../types';

/**
 * Who a change concerns, by viewer (a stream's credential; undefined when the stream has none,
 * which every audience includes).
 */
export type ListAudience = (viewer: string | undefined) => boolean;

/** Every stream. */
export const EVERYONE: ListAudience = () => true;

/** A client stream and whose view it carries. */
export interface ViewedStream {
  stream: ClientEventStream;
  viewer?: string;
}

/** Coalescing broadcaster of list_changed notifications. */
export class ListChangedNotifier {
  private readonly timers = new Map<ListKind, NodeJS.Timeout>();
  /** Kinds changed during their window, with everyone those changes concern. */
  private readonly pending = new Map<ListKind, ListAudience>();
  private closed = false;

  constructor(
    private readonly windowMs: number,
    private readonly openStreams: () => ViewedStream[],
    private readonly alsoDeliver: (kind: ListKind, audience: ListAudience) => void = () => {},
  ) {}

  /** Announces that the view of `kind` changed for the viewers in `audience`. */
  notify(kind: ListKind, audience: ListAudience = EVERYONE): void {
    if (this.closed) return;
    if (this.timers.has(kind)) {
      const earlier = this.pending.get(kind);
      this.pending.set(kind, earlier ? viewer => earlier(viewer) || audience(viewer) : audience);
      return;
    }
    this.broadcast(kind, audience);
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
      const audience = this.pending.get(kind);
      if (audience) {
        this.pending.delete(kind);
        this.broadcast(kind, audience);
        this.startWindow(kind);
      }
    }, this.windowMs);
    timer.unref();
    this.timers.set(kind, timer);
  }

  private broadcast(kind: ListKind, audience: ListAudience) {
    const message = { jsonrpc: '2.0' as const, method: LIST_CHANGED_METHOD[kind] };
    for (const { stream, viewer } of this.openStreams()) {
      if (audience(viewer)) stream.send(message);
    }
    this.alsoDeliver(kind, audience);
  }
}
