/*
 * The end of the client's side of one tool call: the client's POST connection closed early, its
 * session ended, or the broker is stopping.
 *
 * One object per call with one listener on each source and one on the response, all removed by
 * `release()`. It is a ClientGone flag, not an AbortController (issue #21): the call's one
 * AbortController is the forwarder's, which this flag's watcher aborts once the backend was told.
 */
import type { ServerResponse } from 'node:http';
import { ClientGoneFlag, type ClientGone } from '../backend/ClientGone';

type CallResponse = Pick<ServerResponse, 'on' | 'off' | 'writableFinished'>;

/** A call's end; it is its own listener on the sources (`handleEvent`). */
class ResponseCallEnd extends ClientGoneFlag implements CallEnd {
  readonly #res: CallResponse;
  readonly #sources: readonly AbortSignal[];
  #attached = false;

  constructor(res: CallResponse, sources: readonly AbortSignal[]) {
    super();
    this.#res = res;
    this.#sources = sources;
    if (sources.some(source => source.aborted)) {
      this.markGone();
      return;
    }
    this.#attached = true;
    res.on('close', this.#onClose);
    for (const source of sources) source.addEventListener('abort', this);
  }

  /** A source aborted. */
  handleEvent(): void {
    this.release();
    this.markGone();
  }

  /** Stops listening to the response and the sources. Idempotent. */
  release(): void {
    if (!this.#attached) return;
    this.#attached = false;
    this.#res.off('close', this.#onClose);
    for (const source of this.#sources) source.removeEventListener('abort', this);
  }

  readonly #onClose = () => {
    if (!this.#res.writableFinished) this.markGone();
  };
}

/** The client's side of one call, and the means to stop watching its sources. */
export interface CallEnd extends ClientGone {
  /** Stops listening to the response and the sources. Idempotent. */
  release(): void;
}

/**
 * The client's side of a call: gone when the client's POST connection closes early or any of
 * `sources` aborts. Unlike `AbortSignal.any`, it stops listening to the long-lived sources once
 * the call is over (`release`, to be called as a method), so nothing per call stays attached to
 * the session or the broker.
 */
export function callEnd(res: CallResponse, sources: AbortSignal[]): CallEnd {
  return new ResponseCallEnd(res, sources);
}
