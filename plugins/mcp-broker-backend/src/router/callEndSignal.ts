/*
 * The end signal of one tool call: the client's POST connection closed early, its session ended,
 * or the broker is stopping.
 */
import type { ServerResponse } from 'node:http';
import { requestSignal } from '../backend/requestSignal';

/** Reason when the client's connection closed before its answer was finished. */
const CLIENT_GONE = Object.freeze({
  name: 'ClientGone',
  message: 'the client closed its connection before the answer',
});

/**
 * A signal that aborts when the client's POST connection closes early or any of `sources` aborts.
 * Unlike `AbortSignal.any`, it stops listening to the long-lived sources once the call is over
 * (`release`), so nothing per call stays attached to the session or the broker.
 */
export function callEndSignal(
  res: Pick<ServerResponse, 'on' | 'off' | 'writableFinished'>,
  sources: AbortSignal[],
): { signal: AbortSignal; release: () => void } {
  const clientGone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) clientGone.abort(CLIENT_GONE);
  };
  res.on('close', onClose);
  const linked = requestSignal([clientGone.signal, ...sources]);
  return {
    signal: linked.signal,
    release: () => {
      res.off('close', onClose);
      linked.release();
    },
  };
}
