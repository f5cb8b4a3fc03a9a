/*
 * One server-sent-events stream towards a client. Guarantees: anti-buffering headers (no proxy
 * or compression middleware holds events back), a keep-alive comment every `keepAliveMs`, and
 * a bounded write buffer: when more than `maxBufferedBytes` are waiting for a client that does
 * not read, the connection is destroyed rather than queueing without limit. Writes never wait,
 * so one slow client cannot delay the others. Only JSON (which has no raw newlines) goes into
 * `data:` lines; no untrusted text reaches `event:` or `id:` lines.
 */
import type { Response } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import type { ClientEventStream, ClientEventStreamSettings } from '../types';
import type { JsonRpcMessage } from '../protocol/jsonRpc';

/** Options of {@link SseClientStream.open}. */
export interface SseClientStreamOptions extends ClientEventStreamSettings {
  /** Extra response headers (e.g. `Mcp-Session-Id`). */
  headers?: Readonly<Record<string, string>>;
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
  private corked = false;

  private constructor(
    private readonly res: Response,
    private readonly options: SseClientStreamOptions,
  ) {
    res.on('close', () => this.finish('client-gone'));
  }

  /** Sets the headers of an SSE answer on `res` (anti-buffering ones, and `headers`). */
  static setHeaders(res: Response, headers?: Readonly<Record<string, string>>): void {
    res.setHeader('Content-Type', 'text/event-stream');
    // no-transform keeps compression middleware from buffering the stream.
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    if (headers !== undefined) {
      for (const name of Object.keys(headers)) res.setHeader(name, headers[name]);
    }
    res.socket?.setNoDelay(true);
  }

  /** One `message` event carrying `json` (JSON text: it has no raw newlines). */
  static event(json: string): string {
    return `event: message\ndata: ${json}\n\n`;
  }

  /** Sends the SSE headers on `res` and returns the stream. */
  static open(res: Response, options: SseClientStreamOptions): SseClientStream {
    res.status(200);
    SseClientStream.setHeaders(res, options.headers);
    const stream = new SseClientStream(res, options);
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
    return this.write(SseClientStream.event(JSON.stringify(message)));
  }

  close(): void {
    if (this.isClosed) return;
    if (!this.res.writableEnded) this.res.end();
    this.finish('ended');
  }

  private write(chunk: string): boolean {
    if (this.isClosed) return false;
    const waiting = this.res.writableLength;
    // UTF-8 has at most 3 bytes per UTF-16 unit: count the bytes only near the bound.
    if (
      waiting + chunk.length * 3 > this.options.maxBufferedBytes &&
      waiting + Buffer.byteLength(chunk) > this.options.maxBufferedBytes
    ) {
      this.finish('too-slow');
      this.res.destroy();
      return false;
    }
    this.corkUntilNextTick();
    this.res.write(chunk);
    return true;
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
    clearInterval(this.keepAlive);
    this.controller?.abort(STREAM_CLOSED);
    this.options.onClose?.(reason);
  }
}

/**
 * Turns `res` into an SSE stream owned by the broker (closed on shutdown, with the broker's
 * keep-alive and buffer bound).
 */
export function openBrokerEventStream(
  broker: Pick<McpBroker, 'openEventStream'>,
  res: Response,
  headers?: Readonly<Record<string, string>>,
): ClientEventStream {
  return broker.openEventStream(settings => SseClientStream.open(res, { ...settings, headers }));
}
