/*
 * The end signal of one tool call: the client's POST connection closed early, its session ended,
 * or the broker is stopping.
 *
 * One AbortController per call with one listener on each source and one on the response, all
 * removed by `release()` (issue #21: the call path used to link a client-gone controller and a
 * request signal under it, two controllers and their closures per call).
 */
import type { ServerResponse } from 'node:http';

/** Reason when the client's connection closed before its answer was finished. */
const CLIENT_GONE = Object.freeze({
  name: 'ClientGone',
  message: 'the client closed its connection before the answer',
});

type CallResponse = Pick<ServerResponse, 'on' | 'off' | 'writableFinished'>;

/** A call's end signal; it is its own listener on the sources (`handleEvent`). */
class CallEnd {
  readonly #controller = new AbortController();
  readonly #res: CallResponse;
  readonly #sources: readonly AbortSignal[];
  #attached = false;

  constructor(res: CallResponse, sources: readonly AbortSignal[]) {
    this.#res = res;
    this.#sources = sources;
    for (const source of sources) {
      if (source.aborted) {
        this.#controller.abort(source.reason);
        return;
      }
    }
    this.#attached = true;
    res.on('close', this.#onClose);
    for (const source of sources) source.addEventListener('abort', this);
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** A source aborted. */
  handleEvent(event: Event): void {
    this.#controller.abort((event.currentTarget as AbortSignal).reason);
    this.release();
  }

  /** Stops listening to the response and the sources. Idempotent. */
  release(): void {
    if (!this.#attached) return;
    this.#attached = false;
    this.#res.off('close', this.#onClose);
    for (const source of this.#sources) source.removeEventListener('abort', this);
  }

  readonly #onClose = () => {
    if (!this.#res.writableFinished) this.#controller.abort(CLIENT_GONE);
  };
}

/**
 * A signal that aborts when the client's POST connection closes early or any of `sources` aborts.
 * Unlike `AbortSignal.any`, it stops listening to the long-lived sources once the call is over
 * (`release`, to be called as a method), so nothing per call stays attached to the session or
 * the broker.
 */
export function callEndSignal(
  res: CallResponse,
  sources: AbortSignal[],
): { readonly signal: AbortSignal; release(): void } {
  return new CallEnd(res, sources);
}
