/*
 * The two ends of a held call's mailbox (see HeldCallStore.ts): the holder's sink that writes a
 * leg into it, and the reading loop of the replica that claimed the round. Writes are serialised
 * (one at a time, in call order) so the reader sees the messages as the backend stream yielded
 * them; the reader polls at a short interval until the end row, the deadline, or its client going
 * away — the only polled path of the broker, used only when a retry lands on another replica.
 * A reader whose client went away marks its claim cancelled; the holder's sink reads the claim at
 * the same interval while its leg lasts and then aborts its `clientGone`, so the holder cancels
 * the backend call as for a client of its own, writes nothing more and deletes the call's rows.
 * The same polling (`pollMailbox`) carries a 2025 client's answers, given on another replica, to
 * the replica whose call to a 2026-07-28 backend waits for them (StatelessInputAnswers.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ClientMessageSink } from './ToolCallForwarder';
import type { HeldCallStore, MailboxEntry } from '../inputRequests/HeldCallStore';

/**
 * A sink writing a held call's leg into the mailbox for the replica that claimed the round. Its
 * `clientGone` aborts when that replica marks the claim cancelled (read every `pollMs` until the
 * leg ends; at once when `cancelled`); the call's rows are then deleted after the writes under
 * way, and nothing more is written.
 */
export function mailboxSink(options: {
  store: HeldCallStore;
  callId: string;
  round: number;
  expiresAt: number;
  pollMs: number;
  /** The claim was already cancelled when the holder took it over. */
  cancelled?: boolean;
  onError: (error: unknown) => void;
}): ClientMessageSink {
  const { store, callId, round, expiresAt, onError } = options;
  const gone = new AbortController();
  const legEnded = new AbortController();
  let written = Promise.resolve();
  const append = (text: string | undefined) => {
    if (gone.signal.aborted) return; // nobody reads this mailbox any more
    written = written.then(() => store.append(callId, round, text, expiresAt)).catch(onError);
  };
  const cancel = () => {
    if (gone.signal.aborted) return;
    gone.abort();
    written = written.then(() => store.deleteCall(callId)).catch(onError);
  };
  const watchClaim = async () => {
    while (!legEnded.signal.aborted && !gone.signal.aborted) {
      // Ends early (the timer cleared) when the leg ends; the loop then sees it.
      await delay(options.pollMs, undefined, { signal: legEnded.signal }).catch(() => undefined);
      if (legEnded.signal.aborted) return;
      const claim = await store.claimOf(callId, round).catch(error => {
        onError(error);
        return undefined; // the next poll tries again
      });
      if (claim?.cancelled) cancel();
    }
  };
  if (options.cancelled) cancel();
  else void watchClaim();
  return {
    send(message) {
      append(JSON.stringify(message));
      return !gone.signal.aborted;
    },
    end() {
      append(undefined);
      legEnded.abort();
    },
    clientGone: gone.signal,
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
 * (epoch ms) sends `timedOut()` instead. Ends `sink` in any case. Resolves with how the relay
 * ended: `aborted` when the client went away first (the caller cancels the claim).
 */
export async function relayMailbox(options: {
  store: HeldCallStore;
  callId: string;
  round: number;
  sink: ClientMessageSink;
  deadline: number;
  pollMs: number;
  timedOut: () => Record<string, unknown>;
}): Promise<MailboxPollEnd> {
  const { sink } = options;
  try {
    const end = await pollMailbox({
      ...options,
      signal: sink.clientGone,
      onMessage: message => sink.send(JSON.parse(message)),
    });
    if (end === 'timed-out') sink.send(options.timedOut());
    return end;
  } finally {
    sink.end();
  }
}
