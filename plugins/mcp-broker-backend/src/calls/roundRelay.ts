/*
 * The two ends of a held call's round relayed between replicas (see HeldCallStore.ts): the
 * holder's sink that turns a client request's share of the call into signals of the round, and
 * the claiming replica's wait for them (replicas/SignalBus.ts). Sends are serialised (one at a
 * time, in call order), so the claiming replica gets the messages as the backend stream yielded
 * them; it waits until the `end` signal, the deadline, the holder being gone (it died with the
 * call: asked every PRESENCE_BEAT_MS), or its client going away — then it sends the call a
 * `cancel` signal, which the holder (waiting for its call's signals) turns into the cancellation
 * of the backend call, as for a client of its own.
 */
import { callAddress, relayAddress, type SignalBus } from '../replicas/SignalBus';
import type { ClientMessageSink } from './callTypes';
import { PRESENCE_BEAT_MS } from '../replicas/ReplicaPresence';

/** How often the claiming replica reads the relayed round's signals. */
export const ROUND_RELAY_POLL_MS = 100;

/**
 * A sink relaying a held call's client request to the replica that claimed the round. Its
 * `clientGone` is `gone`: aborted by the holder when the claiming replica's client went away
 * (nothing more is sent from then on).
 */
export function relaySink(options: {
  bus: SignalBus;
  callId: string;
  round: number;
  /** How long the relayed signals live (the claiming replica reads them long before). */
  ttlMs: number;
  gone: AbortSignal;
  onError: (error: unknown) => void;
}): ClientMessageSink {
  const { bus, ttlMs, gone, onError } = options;
  const address = relayAddress(options.callId, options.round);
  let sent = Promise.resolve();
  const relay = (kind: 'message' | 'end', payload?: string) => {
    if (gone.aborted) return; // nobody waits for them any more
    sent = sent.then(() => bus.send({ address, kind, payload }, ttlMs)).catch(onError);
  };
  return {
    send(message) {
      relay('message', JSON.stringify(message));
      return !gone.aborted;
    },
    end() {
      relay('end');
    },
    clientGone: gone,
  };
}

/** How a {@link relayRound} wait ended. */
export type RelayEnd = 'ended' | 'timed-out' | 'holder-gone' | 'aborted';

/**
 * Writes the relayed round of call `callId` to `sink` until its `end` signal; at `deadline`
 * (epoch ms) sends `timedOut()` instead, and `holderLost()` once `holderGone` says the holder is
 * gone. Ends `sink` in any case. When the client goes away first (`sink.clientGone`), the holder
 * is sent the call's cancellation. Resolves with how it ended.
 */
export async function relayRound(options: {
  bus: SignalBus;
  callId: string;
  round: number;
  sink: ClientMessageSink;
  deadline: number;
  timedOut: () => Record<string, unknown>;
  /** Whether the replica holding the call is gone (a failure counts as present). */
  holderGone: () => Promise<boolean>;
  holderLost: () => Record<string, unknown>;
  /** How often `holderGone` is asked; default PRESENCE_BEAT_MS. */
  holderCheckMs?: number;
  /** How long the cancellation signal lives. */
  ttlMs: number;
  onError: (error: unknown) => void;
}): Promise<RelayEnd> {
  const { bus, callId, sink } = options;
  const end = await new Promise<RelayEnd>(resolve => {
    let settled = false;
    let unwatch: () => void = () => undefined;
    const deadline: { timer?: NodeJS.Timeout } = {};
    const holderCheck: { timer?: NodeJS.Timeout } = {};
    const finish = (how: RelayEnd) => {
      if (settled) return;
      settled = true;
      unwatch();
      clearTimeout(deadline.timer);
      clearInterval(holderCheck.timer);
      sink.clientGone.removeEventListener('abort', gone);
      resolve(how);
    };
    function gone() {
      finish('aborted');
    }
    if (sink.clientGone.aborted) {
      finish('aborted');
      return;
    }
    sink.clientGone.addEventListener('abort', gone, { once: true });
    deadline.timer = setTimeout(
      () => finish('timed-out'),
      Math.max(0, options.deadline - Date.now()),
    );
    deadline.timer.unref();
    holderCheck.timer = setInterval(() => {
      options
        .holderGone()
        .then(holderGone => holderGone && finish('holder-gone'))
        // A failed check counts as present: the deadline still ends the wait.
        .catch(() => undefined);
    }, options.holderCheckMs ?? PRESENCE_BEAT_MS);
    holderCheck.timer.unref();
    unwatch = bus.watch(
      relayAddress(callId, options.round),
      signal => {
        if (settled) return false;
        if (signal.kind === 'end') finish('ended');
        else if (signal.kind === 'message' && signal.payload !== undefined) {
          sink.send(JSON.parse(signal.payload));
        }
        return true;
      },
      ROUND_RELAY_POLL_MS,
    );
  });
  if (end === 'timed-out') sink.send(options.timedOut());
  if (end === 'holder-gone') sink.send(options.holderLost());
  sink.end();
  if (end === 'aborted') {
    // The client went away (for a 2026-07-28 client, the cancellation): the holder cancels.
    await bus
      .send({ address: callAddress(callId), kind: 'cancel' }, options.ttlMs)
      .catch(options.onError);
  }
  return end;
}
