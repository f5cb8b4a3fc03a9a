/*
 * The end signal of one tool call: the client's POST connection closed early, its session ended,
 * or the broker is stopping.
 */
import type { ServerResponse } from 'node:http';

/** Shared reason of a call's end signal (a DOMException per call would cost a stack trace). */
const CALL_ENDED = Object.freeze({ name: 'CallEnded', message: 'the client went away, its session ended or the broker stopped' });

/**
 * A signal that aborts when the client's POST connection closes early or any of `sources` aborts.
 * Unlike `AbortSignal.any`, it stops listening to the long-lived sources once the call is over
 * (`release`), so nothing per call stays attached to the session or the broker.
 */
export function callEndSignal(
  res: Pick<ServerResponse, 'on' | 'off' | 'writableFinished'>,
  sources: AbortSignal[],
): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort(CALL_ENDED);
  const onClose = () => {
    if (!res.writableFinished) abort();
  };
  res.on('close', onClose);
  for (const source of sources) {
    if (source.aborted) abort();
    else source.addEventListener('abort', abort);
  }
  return {
    signal: controller.signal,
    release: () => {
      res.off('close', onClose);
      for (const source of sources) source.removeEventListener('abort', abort);
    },
  };
}
