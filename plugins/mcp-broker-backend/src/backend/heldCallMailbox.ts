/*
 * The two ends of a held call's mailbox (see HeldCallStore.ts): the holder's sink that writes a
 * leg into it, and the reading loop of the replica that claimed the round. Writes are serialised
 * (one at a time, in call order) so the reader sees the messages as the backend stream yielded
 * them; the reader polls at a short interval until the end row, the deadline, or its client going
 * away — the only polled path of the broker, used only when a retry lands on another replica.
 * The same polling (`pollMailbox`) carries a 2025 client's answers, given on another replica, to
 * the replica whose call to a 2026-07-28 backend waits for them (StatelessInputAnswers.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ClientMessageSink } from './ToolCallForwarder';
import type { HeldCallStore, MailboxEntry } from '../inputRequests/HeldCallStore';

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

/** How a {@link pollMailbox} loop ended. */
export type MailboxPollEnd = 'ended' | 'timed-out' | 'aborted';

/**
 * Reads the mailbox of the call's `round` from its start, handing each message (JSON text) to
 * `onMessage` in order, every `pollMs`, until the leg's end row (`ended`), `deadline` (epoch ms,
 * `timed-out`) or `signal` (`aborted`). A failed read throws, unless `onReadError` takes it (then
 * the next poll tries again).
 */
export async function pollMailbox(options: {
  store: HeldCallStore;
  callId: string;
  round: number;
  pollMs: number;
  signal: AbortSignal;
  deadline?: number;
  onMessage: (message: string) => void;
  onReadError?: (error: unknown) => void;
}): Promise<MailboxPollEnd> {
  const { store, callId, round, signal } = options;
  let after = 0;
  while (!signal.aborted) {
    let entries: MailboxEntry[] = [];
    try {
      entries = await store.read(callId, round, after);
    } catch (error) {
      if (options.onReadError === undefined) throw error;
      options.onReadError(error);
    }
    for (const entry of entries) {
      after = entry.seq;
      if (entry.message === undefined) return 'ended';
      options.onMessage(entry.message);
    }
    if (options.deadline !== undefined && Date.now() > options.deadline) return 'timed-out';
    // Ends early (the timer cleared) when the signal aborts; the loop then sees it.
    await delay(options.pollMs, undefined, { signal }).catch(() => undefined);
  }
  return 'aborted';
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
  const { sink } = options;
  try {
    const end = await pollMailbox({
      ...options,
      signal: sink.clientGone,
      onMessage: message => sink.send(JSON.parse(message)),
    });
    if (end === 'timed-out') sink.send(options.timedOut());
  } finally {
    sink.end();
  }
}
