/*
 * The two ends of a held call's mailbox (see HeldCallStore.ts): the holder's sink that writes a
 * leg into it, and the reading loop of the replica that claimed the round. Writes are serialised
 * (one at a time, in call order) so the reader sees the messages as the backend stream yielded
 * them; the reader polls at a short interval until the end row, the deadline, or its client going
 * away — the only polled path of the broker, used only when a retry lands on another replica.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ClientMessageSink } from './ToolCallForwarder';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';

/** A sink writing a held call's leg into the mailbox for the replica that claimed the round. */
export function mailboxSink(
  store: HeldCallStore,
  callId: string,
  round: number,
  expiresAt: number,
  onError: (error: unknown) => void,
): ClientMessageSink {
  let written = Promise.resolve();
  const append = (text: string | undefined) => {
    written = written.then(() => store.append(callId, round, text, expiresAt)).catch(onError);
  };
  return {
    send(message) {
      append(JSON.stringify(message));
      return true;
    },
    end() {
      append(undefined);
    },
    // The client is on another replica: its leg ends there (at the latest at toolCallTimeout).
    clientGone: new AbortController().signal,
  };
}

/**
 * Relays the mailbox of the call's `round` to `sink` until the leg's end row; at `deadline`
 * (epoch ms) sends `timedOut()` instead. Ends `sink` in any case.
 */
export async function relayMailbox(options: {
  store: HeldCallStore;
  callId: string;
  round: number;
  sink: ClientMessageSink;
  deadline: number;
  pollMs: number;
  timedOut: () => Record<string, unknown>;
}): Promise<void> {
  const { store, callId, round, sink } = options;
  let after = 0;
  try {
    while (!sink.clientGone.aborted) {
      for (const entry of await store.read(callId, round, after)) {
        after = entry.seq;
        if (entry.message === undefined) return;
        sink.send(JSON.parse(entry.message));
      }
      if (Date.now() > options.deadline) {
        sink.send(options.timedOut());
        return;
      }
      // Ends early (the timer cleared) when the client goes; the loop then sees it gone.
      await delay(options.pollMs, undefined, { signal: sink.clientGone }).catch(() => undefined);
    }
  } finally {
    sink.end();
  }
}
