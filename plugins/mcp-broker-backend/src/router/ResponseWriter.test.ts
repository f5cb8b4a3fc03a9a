/*
 * ResponseWriter over real HTTP connections on loopback, read by raw sockets that record each
 * chunk the kernel hands them: when the headers leave, and whether an answer is one JSON
 * document or a stream, for a session's tool call (always a stream) and a 2026-07-28 call (JSON
 * unless something streams).
 */
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { waitFor } from '../testing/waitFor';
import type { ClientEventStreamOpener } from '../types';
import { refuseShuttingDown } from './protocol';
import {
  type AnswerShape,
  ResponseWriter,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from './ResponseWriter';

describe('ResponseWriter (real HTTP connections on loopback)', () => {
  let server: http.Server;
  let port: number;
  const writers: ResponseWriter[] = [];
  const responses: http.ServerResponse[] = [];
  const closeReasons: string[] = [];
  /** What each writer's observer heard, in order (`'none'`: an answer without a final response). */
  const heard: unknown[] = [];
  /** Emits 'change' whenever a request arrives or a client receives bytes. */
  const changes = new EventEmitter();
  const broker = {
    openEventStream: (open: ClientEventStreamOpener) =>
      open({
        keepAliveMs: 60_000,
        maxBufferedBytes: 64 * 1024,
        onClose: reason => closeReasons.push(reason),
      }),
  };
  const shapes: Record<string, AnswerShape> = {
    '/session-call': { finalAlone: 'stream', openAfterMs: 150, headers: { 'Mcp-Session-Id': 's' } },
    '/modern-call': { finalAlone: 'json', openAfterMs: 150 },
  };

  beforeEach(async () => {
    const app = express();
    app.get(['/session-call', '/modern-call'], (req, res) => {
      responses.push(res);
      const writer = new ResponseWriter(res, broker, shapes[req.path], {
        answered: final => heard.push(final ?? 'none'),
      });
      writer.holdForCall();
      writers.push(writer);
      changes.emit('change');
    });
    app.get('/unavailable', (_req, res) =>
      new ResponseWriter(res).refuse(503, -32603, 'The store is unavailable; retry shortly', 1),
    );
    app.get('/draining', (_req, res) => refuseShuttingDown(new ResponseWriter(res), 1));
    server = http.createServer(app);
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    jest.useRealTimers();
    writers.splice(0).forEach(w => w.end());
    responses.length = 0;
    closeReasons.length = 0;
    heard.length = 0;
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  /** Waits for the condition, re-checking it at each change (no timer: fake ones may be on). */
  async function waitUntil(condition: () => boolean) {
    while (!condition()) await once(changes, 'change');
  }

  /** A raw client that records each chunk the kernel hands it. */
  async function rawClient(path: string) {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: { text: string }[] = [];
    socket.on('data', data => {
      chunks.push({ text: data.toString('utf8') });
      changes.emit('change');
    });
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await waitUntil(() => writers.length > 0);
    const text = () => chunks.map(c => c.text).join('');
    return { socket, chunks, text, writer: writers[writers.length - 1] };
  }

  // Fake timers for the silence deadline (150 ms); the sockets stay real.
  const fakeTimers = () =>
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });

  const RESULT = { jsonrpc: '2.0' as const, id: 1, result: {} };
  const progress = (n: number) => ({
    jsonrpc: '2.0' as const,
    method: 'notifications/progress',
    params: { progress: n },
  });

  it('answers a session’s quick call with headers, its one event and the end in one write', async () => {
    fakeTimers();
    const client = await rawClient('/session-call');
    jest.advanceTimersByTime(149);
    expect(responses[0].headersSent).toBe(false); // nothing before the first message
    const event = 'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n';
    client.writer.finish(RESULT);
    client.writer.end();
    await waitUntil(() => client.text().endsWith(event));
    client.socket.destroy();
    expect(client.chunks).toHaveLength(1); // one write: one segment on loopback
    const text = client.chunks[0].text;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('Content-Type: text/event-stream');
    expect(text).toContain('Mcp-Session-Id: s');
    // The whole answer was known at once: a sized body, no chunked framing.
    expect(text).toContain(`Content-Length: ${Buffer.byteLength(event)}\r\n`);
    expect(text).not.toContain('Transfer-Encoding');
    expect(text).toMatch(/\r\n\r\nevent: message\n/);
    expect(text).not.toContain(': stream open');
  });

  it('streams once a message other than the final one comes: the messages of one tick leave together, the result on the stream', async () => {
    fakeTimers();
    const client = await rawClient('/session-call');
    client.writer.send(progress(1));
    client.writer.send(progress(2));
    await waitUntil(() => client.chunks.some(c => c.text.includes('"progress":2')));
    expect(client.chunks).toHaveLength(1);
    expect(client.chunks[0].text).toContain('Transfer-Encoding: chunked');
    expect(client.chunks[0].text).toMatch(/"progress":1\}\}\n\n[\s\S]*"progress":2/);
    client.writer.finish(RESULT);
    await waitUntil(() => client.text().endsWith('\r\n0\r\n\r\n'));
    client.socket.destroy();
    expect(client.text()).toContain('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}');
    expect(closeReasons).toEqual(['ended']);
  });

  it('sends the headers of a silent call at the deadline (keep-alives are due)', async () => {
    fakeTimers();
    const client = await rawClient('/session-call');
    jest.advanceTimersByTime(149);
    expect(responses[0].headersSent).toBe(false);
    jest.advanceTimersByTime(1);
    expect(responses[0].headersSent).toBe(true);
    await waitUntil(() => client.chunks.some(c => c.text.includes(': stream open')));
    client.socket.destroy();
    expect(client.chunks).toHaveLength(1);
    expect(client.chunks[0].text).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*: stream open\n\n/);
  });

  it('answers a 2026-07-28 call whose only message is its result as plain compact JSON with its status', async () => {
    const client = await rawClient('/modern-call');
    const refused = { jsonrpc: '2.0' as const, id: 7, error: { code: -32021, message: 'x' } };
    client.writer.finish(refused, 400);
    client.writer.end();
    await waitUntil(() => client.text().endsWith(JSON.stringify(refused)));
    client.socket.destroy();
    const text = client.text();
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text).toContain('Content-Type: application/json');
    expect(text).toMatch(/\r\n\r\n\{"jsonrpc":"2\.0","id":7,"error":/);
    expect(closeReasons).toEqual([]); // no stream was opened
  });

  it('streams a 2026-07-28 call once a progress notification comes, the result on the stream', async () => {
    const client = await rawClient('/modern-call');
    client.writer.send(progress(1));
    client.writer.finish(RESULT, 400); // a status does not apply to a stream
    await waitUntil(() => client.text().endsWith('\r\n0\r\n\r\n'));
    client.socket.destroy();
    const text = client.text();
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('Content-Type: text/event-stream');
    expect(text.match(/event: message/g)).toHaveLength(2);
  });

  it('opens the stream of a silent 2026-07-28 call at the deadline; its result then goes on it', async () => {
    fakeTimers();
    const client = await rawClient('/modern-call');
    jest.advanceTimersByTime(150);
    await waitUntil(() => client.text().includes(': stream open'));
    client.writer.finish(RESULT);
    await waitUntil(() => client.text().endsWith('\r\n0\r\n\r\n'));
    client.socket.destroy();
    expect(client.text()).toContain('Content-Type: text/event-stream');
    expect(client.text()).toContain('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}');
  });

  it('writes nothing after the answer ended, and nothing to a client that is gone', async () => {
    const client = await rawClient('/modern-call');
    client.socket.destroy();
    await waitFor(() => responses[0].destroyed, 'the server side to see the client gone');
    expect(client.writer.answered).toBe(true);
    expect(client.writer.finish(RESULT)).toBe(false);
    client.writer.end(); // an answer that ends without a message to a client that is gone
    expect(closeReasons).toEqual([]);
    expect(client.writer.send(progress(1))).toBe(false);
  });

  it('tells its observer once how the answer ended: the final response, or none when the client left first', async () => {
    const answered = await rawClient('/modern-call');
    answered.writer.send(progress(1));
    answered.writer.finish(RESULT);
    answered.writer.end();
    await waitUntil(() => answered.text().includes('"result"'));
    answered.socket.destroy();
    expect(heard).toEqual([RESULT]);

    const gone = await rawClient('/session-call');
    await waitUntil(() => writers.length === 2);
    gone.socket.destroy();
    await waitFor(() => heard.length === 2, 'the observer to hear of the closed connection');
    writers[1].finish(RESULT); // too late: nothing is written, nothing heard again
    expect(heard).toEqual([RESULT, 'none']);
  });

  it('says when to retry every 503: Retry-After for an unavailable dependency, the drain keeps its own', async () => {
    const unavailable = await fetch(`http://127.0.0.1:${port}/unavailable`);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    expect(await unavailable.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32603, message: 'The store is unavailable; retry shortly' },
    });
    const draining = await fetch(`http://127.0.0.1:${port}/draining`);
    expect(draining.status).toBe(503);
    expect(draining.headers.get('retry-after')).toBe('1');
  });
});
