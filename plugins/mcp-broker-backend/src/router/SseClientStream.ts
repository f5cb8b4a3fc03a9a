/*
 * One server-sent-events stream towards a client. Guarantees: anti-buffering headers (no proxy
 * or compression middleware holds events back), a keep-alive comment every `keepAliveMs`, and
 * a bounded write buffer: when more than `maxBufferedBytes` are waiting for a client that does
 * not read, the connection is destroyed rather than queueing without limit. Writes never wait,
 * so one slow client cannot delay the others. Only JSON (which has no raw newlines) goes into
 * `data:` lines; no untrusted text reaches `event:` or `id:` lines.
 *
 * A deferred stream (`deferHeadersMs`) with `singleMessageAsJson` answers `application/json`
 * instead when the stream closes with exactly one message written and nothing sent yet (a tool
 * call whose backend answered at once with its result): the same bytes a client would parse from
 * the event, without the SSE framing and chunked encoding (issue #21).
 */
import type { Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import type { ClientEventStream, ClientEventStreamSettings } from '../types';
import type { JsonRpcMessage } from '../protocol/jsonRpc';

/** Options of {@link SseClientStream.open}. */
export interface SseClientStreamOptions extends ClientEventStreamSettings {
  /** Extra response headers (e.g. `Mcp-Session-Id`). */
  headers?: Record<string, string>;
  /**
   * Hold the headers back until the first event, or this many milliseconds at the latest. A
   * tool call's response stream uses it: a quick call then leaves as one packet (headers, result
   * and end of stream) instead of two. Without it the headers go out at once (GET streams, whose
   * clients wait for them to know the stream is live).
   */
  deferHeadersMs?: number;
  /**
   * With `deferHeadersMs`: a stream that closes before its headers left, with exactly one
   * message, answers that message as `application/json` (only for a client whose Accept allows
   * it). Anything more (a second message, the header deadline) makes it SSE as usual.
   */
  singleMessageAsJson?: boolean;
}

/**
 * The reason of a closed stream's signal. One shared value: `abort()` without a reason builds a
 * DOMException with a stack trace, a measurable cost when every tool call has its own stream.
 */
const STREAM_CLOSED = Object.freeze({ name: 'StreamClosed', message: 'the event stream closed' });

/** An open SSE response. */
export class SseClientStream implements ClientEventStream {
  /** Created when `signal` is first read: a tool call's stream is never asked for one. */
  private controller: AbortController | undefined;
  private isClosed = false;
  private keepAlive: NodeJS.Timeout | undefined;
  private headerDeadline: NodeJS.Timeout | undefined;
  private corked = false;
  /**
   * While a deferred stream's headers wait: the events of the current tick, written together on
   * the next tick, or with the end of the response when the stream closes first (one write:
   * headers, events and end).
   */
  private held: string | undefined;
  /**
   * With `singleMessageAsJson`, while nothing has been sent: the JSON of the one message held,
   * or `null` once more than one was (then the stream stays SSE).
   */
  private single: string | null | undefined;

  private constructor(
    private readonly res: Response,
    private readonly options: SseClientStreamOptions,
  ) {
    res.on('close', () => this.finish('client-gone'));
  }

  /** Sends the SSE headers on `res` and returns the stream. */
  static open(res: Response, options: SseClientStreamOptions): SseClientStream {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream');
    // no-transform keeps compression middleware from buffering the stream.
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    if (options.headers !== undefined) {
      for (const name of Object.keys(options.headers)) res.setHeader(name, options.headers[name]);
    }
    res.socket?.setNoDelay(true);
    const stream = new SseClientStream(res, options);
    if (options.deferHeadersMs !== undefined) {
      // The headers leave with the first write; this comment is the latest that happens. Keep-
      // alives start then too: a call that ends before the deadline never needs a timer more.
      stream.headerDeadline = setTimeout(() => {
        if (!res.headersSent && stream.write(': stream open\n\n')) stream.flushHeld();
        stream.startKeepAlive();
      }, options.deferHeadersMs);
      stream.headerDeadline.unref();
      return stream;
    }
    stream.startKeepAlive();
    stream.corkUntilNextTick();
    res.flushHeaders();
    // A comment right away lets clients (and tests) see the stream is live.
    stream.write(': stream open\n\n');
    return stream;
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.isClosed) this.controller.abort(STREAM_CLOSED);
    }
    return this.controller.signal;
  }

  send(message: JsonRpcMessage): boolean {
    const json = JSON.stringify(message);
    if (this.options.singleMessageAsJson && !this.isClosed && !this.res.headersSent) {
      this.single = this.single === undefined ? json : null;
    }
    return this.write(`event: message\ndata: ${json}\n\n`);
  }

  close(): void {
    if (this.isClosed) return;
    const held = this.held;
    this.held = undefined;
    if (!this.res.writableEnded) {
      if (typeof this.single === 'string' && !this.res.headersSent) {
        this.endAsJson(this.single);
      } else {
        this.res.end(held);
      }
    }
    this.finish('ended');
  }

  /**
   * Answers the one message as `application/json` instead of an event stream (Node sizes the
   * body: nothing was sent yet). `Cache-Control` stays: `no-transform` keeps compression
   * middleware out, as for the event stream the client would have had.
   */
  private endAsJson(json: string): void {
    this.res.setHeader('Content-Type', 'application/json');
    this.res.removeHeader('X-Accel-Buffering');
    this.res.end(json);
  }

  private write(chunk: string): boolean {
    if (this.isClosed) return false;
    const waiting = this.res.writableLength + (this.held?.length ?? 0);
    // UTF-8 has at most 3 bytes per UTF-16 unit: count the bytes only near the bound.
    if (
      waiting + chunk.length * 3 > this.options.maxBufferedBytes &&
      waiting + Buffer.byteLength(chunk) > this.options.maxBufferedBytes
    ) {
      this.finish('too-slow');
      this.res.destroy();
      return false;
    }
    if (this.options.deferHeadersMs !== undefined && !this.res.headersSent) {
      if (this.held === undefined) {
        this.held = chunk;
        process.nextTick(writeHeld, this);
      } else {
        this.held += chunk;
      }
      return true;
    }
    this.corkUntilNextTick();
    this.res.write(chunk);
    return true;
  }

  /** @internal Writes the events held for the next tick now. */
  flushHeld(): void {
    const held = this.held;
    if (held === undefined || this.isClosed) return;
    this.held = undefined;
    this.res.write(held);
  }

  private startKeepAlive() {
    if (this.isClosed || this.keepAlive !== undefined) return;
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), this.options.keepAliveMs);
    this.keepAlive.unref();
  }

  /**
   * Writes of one tick leave in one packet: the headers with the opening comment, and a tool
   * call's result with the end of the response. Node corks chunked body writes by itself but
   * sends flushHeaders() at once, so with Nagle off a tool call took 3 syscalls and TCP
   * segments on each end instead of 2.
   */
  private corkUntilNextTick() {
    if (this.corked) return;
    this.corked = true;
    this.res.cork();
    process.nextTick(() => {
      this.corked = false;
      this.res.uncork();
    });
  }

  private finish(reason: 'ended' | 'client-gone' | 'too-slow') {
    if (this.isClosed) return;
    this.isClosed = true;
    this.held = undefined;
    clearInterval(this.keepAlive);
    clearTimeout(this.headerDeadline);
    this.controller?.abort(STREAM_CLOSED);
    this.options.onClose?.(reason);
  }
}

function writeHeld(stream: SseClientStream): void {
  stream.flushHeld();
}

/**
 * Turns `res` into an SSE stream owned by the broker (closed on shutdown, with the broker's
 * keep-alive and buffer bound).
 */
export function openBrokerEventStream(
  broker: Pick<McpBroker, 'openEventStream'>,
  res: Response,
  headers: Record<string, string>,
  options: Pick<SseClientStreamOptions, 'deferHeadersMs' | 'singleMessageAsJson'> = {},
): ClientEventStream {
  return broker.openEventStream(settings =>
    SseClientStream.open(res, { ...settings, headers, ...options }),
  );
}
