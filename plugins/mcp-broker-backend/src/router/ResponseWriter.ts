/*
 * The one writer of a POST's answer, for both eras: it decides when the headers leave and
 * whether the answer is one JSON document or an SSE stream.
 *
 * An answer is held back until its first message:
 *   - a message that is not the final response (progress, a request for input, a log line)
 *     opens the stream: SSE headers, a comment, and the messages of that tick in one packet;
 *   - the final response alone is answered as plain JSON with its HTTP status (`finalAlone:
 *     'json'`: every 2026-07-28 answer, and a session's answers other than `tools/call`), or as
 *     a one-event stream written at once — headers, event and end in one write with a sized body
 *     (`'stream'`: a session's `tools/call`, whose answer spec §4 makes an SSE stream);
 *   - silence until `openAfterMs` after the call was handed over (`holdForCall`) opens the
 *     stream anyway (headers and a comment: the client learns the call is alive, keep-alive
 *     comments follow).
 * A call's final response given as plain JSON is compact whatever the app's `json spaces`: the
 * same bytes as the event it would have been, one line (clients that read a body line by line,
 * as they read a stream, get the whole message). What the router answers itself (`answer`:
 * lists, refusals, unknown names) follows the app's JSON formatting, as every answer of the
 * backend does.
 *
 * The stream itself is an SseClientStream owned by the broker (keep-alive, bounded buffer,
 * closed on shutdown). Nothing is written after the answer ended or the client went away.
 *
 * A writer may be watched (`AnswerObserver`, the request's telemetry): it hears once how the
 * answer ended — the final response (`finish`, `answer`, `refuse`), or none (`end`, or the
 * client's connection closing first, e.g. under a `subscriptions/listen` stream).
 */
import type { Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import { jsonRpcError, type JsonRpcId, type JsonRpcMessage } from '../protocol/jsonRpc';
import type { ClientEventStream, ClientResponseWriter } from '../types';
import { openBrokerEventStream, SseClientStream } from './SseClientStream';

/** How an answer may be given; see the file comment. */
export interface AnswerShape {
  /** How the final response goes when nothing else was sent before it. */
  readonly finalAlone: 'json' | 'stream';
  /** Open the stream anyway after this long without a message (never when absent). */
  readonly openAfterMs?: number;
  /** Headers of the stream (the session's `Mcp-Session-Id`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Seconds a client should wait before retrying a request answered 503 because something the
 * broker needs (its database, the permission backend) is unavailable for a moment.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Who hears how an answer ended (see the file comment). */
export interface AnswerObserver {
  /** The final response, or undefined when the answer ended without one. Called once. */
  answered(final: JsonRpcMessage | undefined): void;
}

/** A plain JSON answer (the shape of every answer that never streams). */
export const JSON_ANSWER: AnswerShape = { finalAlone: 'json' };

/** The writer of one POST's answer; see the file comment. */
export class ResponseWriter implements ClientResponseWriter {
  private stream: ClientEventStream | undefined;
  private finished = false;
  private silence: NodeJS.Timeout | undefined;

  constructor(
    /** The HTTP response (for the router: its `close` tells that the client went away). */
    readonly res: Response,
    /** Opens the broker's streams (absent for a writer that only ever refuses). */
    private readonly broker?: Pick<McpBroker, 'openEventStream'>,
    private readonly shape: AnswerShape = JSON_ANSWER,
    /** Hears how the answer ended (see the file comment). */
    private observer?: AnswerObserver,
  ) {
    if (observer !== undefined) res.once('close', () => this.ended(undefined));
  }

  /**
   * The answer is a call's from now on (the request was admitted and handed over): silence
   * until `openAfterMs` opens its stream.
   */
  holdForCall(): void {
    const { openAfterMs } = this.shape;
    if (openAfterMs === undefined || this.silence !== undefined || this.answered) return;
    this.silence = setTimeout(() => {
      if (!this.answered) this.open();
    }, openAfterMs);
    this.silence.unref();
  }

  /** True once an answer has begun (headers sent) or the client's connection is gone. */
  get answered(): boolean {
    return this.finished || this.res.headersSent || this.res.destroyed;
  }

  /** {@inheritDoc ClientResponseWriter.send} */
  send(message: JsonRpcMessage): boolean {
    if (this.finished) return false;
    return this.open().send(message);
  }

  /** {@inheritDoc ClientResponseWriter.finish} */
  finish(message: JsonRpcMessage, httpStatus = 200): boolean {
    if (this.finished) return false;
    this.finished = true;
    clearTimeout(this.silence);
    this.ended(message);
    const stream = this.stream;
    if (stream !== undefined) {
      const sent = stream.send(message);
      stream.close();
      return sent;
    }
    if (this.res.headersSent || this.res.destroyed) return false;
    this.retryAfterWhenUnavailable(httpStatus);
    const text = JSON.stringify(message);
    if (this.shape.finalAlone === 'json') {
      this.res.status(httpStatus).type('application/json').send(text);
      return true;
    }
    // One write: headers, the one event and the end, with a sized body.
    this.res.status(200);
    SseClientStream.setHeaders(this.res, this.shape.headers);
    this.res.end(SseClientStream.event(text));
    return true;
  }

  /** {@inheritDoc ClientResponseWriter.end} */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.silence);
    this.ended(undefined);
    // An answer that ends without a message to a client that is gone writes nothing; to one
    // still there, it ends as an empty stream.
    if (this.stream === undefined && (this.res.headersSent || this.res.destroyed)) return;
    this.open().close();
  }

  /**
   * The router's own answer to the request (never a stream): `message` as JSON with `httpStatus`.
   * Every 503 says when to retry (`Retry-After`; {@link UNAVAILABLE_RETRY_AFTER_SECONDS} unless
   * set already), here and in {@link ResponseWriter.finish}. False when the answer had begun already or the client is gone.
   */
  answer(message: JsonRpcMessage, httpStatus = 200): boolean {
    if (this.finished) return false;
    this.finished = true;
    clearTimeout(this.silence);
    this.ended(message);
    if (this.res.headersSent || this.res.destroyed) return false;
    this.retryAfterWhenUnavailable(httpStatus);
    this.res.status(httpStatus).json(message);
    return true;
  }

  /**
   * A refusal before anything was written: `status` with a JSON-RPC error body (what MCP
   * clients expect on the transport level); the message says what to fix.
   */
  refuse(
    status: number,
    code: number,
    message: string,
    id: JsonRpcId | null = null,
    data?: unknown,
  ): void {
    this.answer(jsonRpcError(id, code, message, data), status);
  }

  /** Every 503 says when to retry: `Retry-After`, unless a step set it already. */
  private retryAfterWhenUnavailable(httpStatus: number): void {
    if (httpStatus === 503 && !this.res.hasHeader('Retry-After')) {
      this.res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    }
  }

  /** Tells the observer (once) how the answer ended. */
  private ended(final: JsonRpcMessage | undefined): void {
    const observer = this.observer;
    if (observer === undefined) return;
    this.observer = undefined;
    observer.answered(final);
  }

  private open(): ClientEventStream {
    if (this.stream !== undefined) return this.stream;
    clearTimeout(this.silence);
    if (this.broker === undefined) throw new Error('MCP broker: a refusal-only writer streams');
    this.stream = openBrokerEventStream(this.broker, this.res, this.shape.headers);
    return this.stream;
  }
}
