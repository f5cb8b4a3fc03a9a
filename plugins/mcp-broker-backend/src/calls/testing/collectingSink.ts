/* Test helpers for the call machinery: a sink that records what the client would see. */
import { ClientMessageSink } from '../callTypes';

/** A ClientMessageSink that records messages and lets a test wait for one or disconnect. */
export interface CollectingSink extends ClientMessageSink {
  readonly messages: Array<Record<string, any>>;
  ended: boolean;
  /** Resolves with the first message (already received or future) that matches. */
  waitFor(
    predicate: (m: Record<string, any>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, any>>;
  /** Simulates the client closing its POST stream. */
  disconnect(): void;
}

/** Builds a {@link CollectingSink}. */
export function collectingSink(): CollectingSink {
  const gone = new AbortController();
  const waiters: Array<{
    predicate: (m: Record<string, any>) => boolean;
    resolve: (m: Record<string, any>) => void;
  }> = [];
  const sink: CollectingSink = {
    messages: [],
    ended: false,
    clientGone: gone.signal,
    send(message) {
      if (sink.ended) return false;
      // Round-trip through JSON so tests see what the wire would carry.
      const copy = JSON.parse(JSON.stringify(message));
      sink.messages.push(copy);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(copy)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(copy);
        }
      }
      return true;
    },
    end() {
      sink.ended = true;
    },
    waitFor(predicate, timeoutMs = 5_000) {
      const found = sink.messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no matching message within ${timeoutMs} ms; got ${JSON.stringify(sink.messages)}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          predicate,
          resolve: m => {
            clearTimeout(timer);
            resolve(m);
          },
        });
      });
    },
    disconnect() {
      gone.abort();
    },
  };
  return sink;
}
