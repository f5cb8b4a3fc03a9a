/*
 * Where a held tool call writes (spec §9): a 2026-07-28 client's call to a 2025-era backend that
 * asked for input. The client sees the call as a series of legs — the original `tools/call` and
 * each retry carrying `inputResponses` + `requestState` — while the broker keeps ONE backend call
 * open and keeps reading its stream. This sink stands between the two: it writes to the leg that
 * is attached (the POST response of the current client request) and holds what arrives while no
 * leg is attached.
 *
 * Guarantees: the final response always goes out with the current leg's JSON-RPC id; progress
 * notifications carry the current leg's `progressToken` when the client gave one (the backend only
 * knows the first leg's); what arrives while the call is held is delivered on the next leg, in
 * order: the final response (or error) always, progress and other notifications up to
 * `maxHeldNotifications` (older ones are dropped first: a client that comes back late needs the
 * newest progress, not all of it).
 *
 * Failure modes: a leg whose client goes away aborts `clientGone` (the caller cancels the backend
 * call: closing the response stream is how a 2026-07-28 client cancels); a leg is never written to
 * after it ended.
 */
import type { ClientMessageSink } from './callTypes';
import { isPlainObject, type JsonRpcId } from '../protocol/jsonRpc';

/** Notifications kept for the next leg while a call is held (older ones are dropped first). */
export const DEFAULT_MAX_HELD_NOTIFICATIONS = 100;

/** One client request of a held call: the original `tools/call` or a retry. */
export interface HeldCallLeg {
  readonly sink: ClientMessageSink;
  /** The JSON-RPC id of this client request (the final response carries it). */
  readonly clientRequestId: JsonRpcId;
  /** `params._meta.progressToken` of this client request, if it asked for progress. */
  readonly progressToken?: string | number;
}

/** The sink of a held call; see the file comment. */
export class HeldCallOutput implements ClientMessageSink {
  #leg: HeldCallLeg | undefined;
  #legEnded: (() => void) | undefined;
  readonly #backendProgressToken: string | number | undefined;
  readonly #gone = new AbortController();
  readonly #held: Array<Record<string, unknown>> = [];
  #final: Record<string, unknown> | undefined;
  #ended = false;
  readonly #maxHeld: number;

  constructor(first: HeldCallLeg, maxHeldNotifications = DEFAULT_MAX_HELD_NOTIFICATIONS) {
    this.#backendProgressToken = first.progressToken;
    this.#maxHeld = maxHeldNotifications;
    this.#attach(first);
  }

  /** Aborted when the client of the attached leg goes away (the call is then cancelled). */
  get clientGone(): AbortSignal {
    return this.#gone.signal;
  }

  /** True while a client request is attached (not held). */
  get attached(): boolean {
    return this.#leg !== undefined;
  }

  /** True once the call's final response (or error) was written (delivered or held). */
  get finished(): boolean {
    return this.#ended;
  }

  /**
   * Attaches the next leg: what was held goes out first (in order), then the leg stays attached
   * unless the call already finished. Resolves when this leg ends.
   */
  resume(leg: HeldCallLeg): Promise<void> {
    if (this.#leg !== undefined) throw new Error('a held call has one attached leg at a time');
    const ended = this.#attach(leg);
    for (const message of this.#held.splice(0)) this.send(message);
    if (this.#ended) this.#endLeg();
    return ended;
  }

  /** Resolves when the attached leg ends (at once when none is attached). */
  whenLegEnds(): Promise<void> {
    if (this.#leg === undefined) return Promise.resolve();
    return new Promise(resolve => {
      const previous = this.#legEnded;
      this.#legEnded = () => {
        previous?.();
        resolve();
      };
    });
  }

  /**
   * Answers the attached leg with `result` (an `input_required` result) and ends it; from now on
   * the call is held until {@link HeldCallOutput.resume}.
   */
  hold(result: Record<string, unknown>): void {
    const leg = this.#leg;
    if (leg === undefined) return;
    leg.sink.send({ jsonrpc: '2.0', id: leg.clientRequestId, result });
    this.#endLeg();
  }

  send(message: Record<string, unknown>): boolean {
    const isResponse = message.id !== undefined && message.method === undefined;
    const leg = this.#leg;
    if (leg === undefined) {
      if (isResponse) {
        this.#final = message;
      } else {
        this.#held.push(message);
        if (this.#held.length > this.#maxHeld) this.#held.shift();
      }
      return true;
    }
    if (isResponse) return leg.sink.send({ ...message, id: leg.clientRequestId });
    return leg.sink.send(this.#withLegProgressToken(message, leg));
  }

  end(): void {
    this.#ended = true;
    if (this.#leg === undefined) return; // held: the next leg gets the final response
    this.#endLeg();
  }

  #attach(leg: HeldCallLeg): Promise<void> {
    this.#leg = leg;
    const ended = this.whenLegEnds();
    if (this.#final !== undefined) {
      const final = this.#final;
      this.#final = undefined;
      this.#held.push(final); // after the notifications held before it
    }
    const onGone = () => {
      if (this.#leg === leg) this.#gone.abort();
    };
    leg.sink.clientGone.addEventListener('abort', onGone, { once: true });
    if (leg.sink.clientGone.aborted) onGone();
    const legEnded = this.#legEnded;
    this.#legEnded = () => {
      leg.sink.clientGone.removeEventListener('abort', onGone);
      legEnded?.();
    };
    return ended;
  }

  #endLeg(): void {
    const leg = this.#leg;
    if (leg === undefined) return;
    this.#leg = undefined;
    const ended = this.#legEnded;
    this.#legEnded = undefined;
    leg.sink.end();
    ended?.();
  }

  #withLegProgressToken(
    message: Record<string, unknown>,
    leg: HeldCallLeg,
  ): Record<string, unknown> {
    const params = message.params;
    if (
      message.method !== 'notifications/progress' ||
      !isPlainObject(params) ||
      leg.progressToken === undefined ||
      params.progressToken !== this.#backendProgressToken
    ) {
      return message;
    }
    return { ...message, params: { ...params, progressToken: leg.progressToken } };
  }
}
