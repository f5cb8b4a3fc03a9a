/*
 * The types the call machinery's files share (calls/): where a call writes (ClientMessageSink),
 * what a client answers (ClientAnswer), what a 2026-07-28 caller's input rounds are bound to, a
 * client's retry (InputRetry) and how answers reach backends (BackendResponder). Types only, so
 * that every file of the folder may import them and none imports another just for a type (no
 * file circles). What a call is asked to do and its two halves are typed beside the call itself,
 * in ToolCall.ts, since they name it.
 */
import type { BackendChannels } from '../backend/backendChannels';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { JsonRpcId } from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import type { RequestStateBinding } from '../inputRequests/RequestStateSealer';

/**
 * Where a call writes what the client should see: the response of the client's POST (see
 * `ClientEventStream`), a held call's current client request, another replica's mailbox, or a
 * test's recorder.
 */
export interface ClientMessageSink {
  /** Sends one JSON-RPC message to the client; false when the stream is gone. */
  send(message: Record<string, unknown>): boolean;
  /** Ends the stream (after the final response). */
  end(): void;
  /** Aborts when the client went away (its POST stream closed, or its session ended). */
  readonly clientGone: AbortSignal;
}

/**
 * What the requests a backend puts to a 2025-11-25 client are bound to: a call (ToolCall), or a
 * task's `tasks/result` stream (TaskStreamAsking). Its gateway ids are retired together, by `id`.
 */
export interface AskingCall {
  /** Keys the gateway ids issued for it. */
  readonly id: string;
  /** The backend's configured name (the gateway ids' prefix). */
  readonly backend: string;
  /** The client session asked: only it may answer. */
  readonly owner: string;
  /** Where the requests go. */
  readonly sink: ClientMessageSink;
  /** Set before its first gateway id is registered: only then are there ids to retire. */
  registeredIds: boolean;
  /** A timer that retires one of its gateway ids at its expiry (cleared at its end). */
  addExpiry(timer: NodeJS.Timeout): void;
}

/** A client's JSON-RPC response to a request the broker forwarded (elicitation, sampling). */
export interface ClientAnswer {
  id: unknown;
  result?: unknown;
  error?: unknown;
}

/** What a 2026-07-28 caller's call needs for `input_required` rounds. */
export interface InputRequiredCaller {
  /** The capabilities of the request's `_meta` (only requests they cover are put to the client). */
  declaredCapabilities: Readonly<Record<string, unknown>>;
  /** What the round's `requestState` is bound to (principal, `tools/call`, name, arguments). */
  binding: RequestStateBinding;
}

/** A client's retry of a held call: `tools/call` with `inputResponses` and `requestState`. */
export interface InputRetry {
  binding: RequestStateBinding;
  requestState: string;
  inputResponses: Readonly<Record<string, Record<string, unknown>>>;
  clientRequestId: JsonRpcId;
  /** The retry's own `_meta.progressToken`, if any. */
  progressToken?: string | number;
}

/**
 * How answers reach backends and backends are found again: what the held calls need of the
 * answer router (AnswerRouter implements it).
 */
export interface BackendResponder {
  /** Answers a backend's request with its own id; a failure is logged, never thrown. */
  respond(
    session: LegacySessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void>;
  /** The live backend by name (undefined once it was removed). */
  backendOf(name: string): BackendChannels | undefined;
}
