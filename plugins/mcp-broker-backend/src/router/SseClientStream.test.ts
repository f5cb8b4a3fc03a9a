import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { SseClientStream } from './SseClientStream';

describe('SseClientStream (real HTTP connections on loopback)', () => {
  let server: http.Server;
  let baseUrl: string;
  const streams: SseClientStream[] = [];
  /** The server side of each stream, to see whether headers went out. */
  const responses: http.ServerResponse[] = [];
  const closeReasons: string[] = [];
  /** Emits 'change' whenever a stream opens or a client receives bytes. */
  const changes = new EventEmitter();

  beforeEach(async () => {
    const app = express();
    app.get('/stream', (_req, res) => {
      responses.push(res);
      streams.push(
        SseClientStream.open(res, {
          keepAliveMs: 50,
          maxBufferedBytes: 64 * 1024,
          headers: { 'Mcp-Session-Id': 'abc' },
          onClose: reason => closeReasons.push(reason),
        }),
      );
      changes.emit('change');
    });
    server = http.createServer(app);
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    jest.useRealTimers();
    streams.splice(0).forEach(s => s.close());
    responses.length = 0;
    closeReasons.length = 0;
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  /** Waits for the condition, re-checking it at each change (no timer: fake ones may be on). */
  async function waitUntil(condition: () => boolean) {
    while (!condition()) await once(changes, 'change');
  }

  async function waitForStreams(count: number) {
    await waitUntil(() => streams.length >= count);
  }

  async function openReadingClient() {
    const response = await fetch(`${baseUrl}/stream`);
    let text = '';
    const decoder = new TextDecoder();
    const done = (async () => {
      for await (const chunk of response.body!) {
        text += decoder.decode(chunk as Uint8Array, { stream: true });
        changes.emit('change');
      }
    })().catch(() => {});
    return { response, text: () => text, done };
  }

  it('sends anti-buffering headers, keep-alive comments and JSON messages', async () => {
    const client = await openReadingClient();
    expect(client.response.headers.get('content-type')).toBe('text/event-stream');
    expect(client.response.headers.get('cache-control')).toContain('no-transform');
    expect(client.response.headers.get('mcp-session-id')).toBe('abc');
    await waitUntil(() => /: keep-alive\n\n/.test(client.text()));
    streams[0].send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    streams[0].close();
    await client.done;
    expect(client.text()).toContain(
      'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
    );
    expect(closeReasons).toEqual(['ended']);
  });

  it('disconnects a client that stops reading once its buffer bound is exceeded, while a reading client gets everything', async () => {
    const reader = await openReadingClient();
    // A raw socket that sends its GET and then never reads (paused sockets stop reading from the kernel).
    const url = new URL(baseUrl);
    const stalled = net.connect(Number(url.port), '127.0.0.1');
    stalled.on('error', () => {});
    stalled.write('GET /stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    stalled.pause();
    await waitForStreams(2);
    const [fast, slow] = streams;
    const payload = 'x'.repeat(10_000);
    let sent = 0;
    // 15 MB in total: more than the kernel buffers of a socket that nobody reads.
    for (let i = 0; i < 1500; i++) {
      fast.send({ jsonrpc: '2.0', method: 'test/chunk', params: { i, payload } });
      slow.send({ jsonrpc: '2.0', method: 'test/chunk', params: { i, payload } });
      sent++;
      await new Promise(resolve => setImmediate(resolve));
    }
    // The paused socket cannot observe the close itself; the server side has dropped it.
    expect(slow.closed).toBe(true);
    stalled.destroy();
    expect(closeReasons).toContain('too-slow');
    expect(fast.closed).toBe(false);
    fast.close();
    await reader.done;
    expect(reader.text().match(/event: message/g)).toHaveLength(sent);
  }, 30_000);

  it('creates its abort signal only when asked, aborted once the stream is closed', async () => {
    const client = await openReadingClient();
    await waitForStreams(1);
    const [stream] = streams;
    const signal = stream.signal;
    expect(signal.aborted).toBe(false);
    stream.close();
    expect(signal.aborted).toBe(true);
    expect(stream.signal.aborted).toBe(true);
    await client.done;
  });
});
