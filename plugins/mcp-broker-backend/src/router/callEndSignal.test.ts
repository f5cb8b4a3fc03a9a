/* callEndSignal on real HTTP responses (a loopback server), with the broker's long-lived signals. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { callEndSignal } from './callEndSignal';

describe('callEndSignal', () => {
  let server: http.Server;
  let port: number;
  let onRequest: (res: http.ServerResponse) => void;

  beforeEach(async () => {
    server = http.createServer((_req, res) => onRequest(res));
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  function serve(): Promise<http.ServerResponse> {
    return new Promise(resolve => {
      onRequest = resolve;
    });
  }

  it('aborts when the client disconnects before the answer is finished', async () => {
    const served = serve();
    const request = http.get(`http://127.0.0.1:${port}/`);
    request.on('error', () => undefined);
    const res = await served;
    const ended = callEndSignal(res, [new AbortController().signal]);
    res.writeHead(200).write('partial');
    request.destroy();
    await new Promise(resolve => res.on('close', resolve));
    expect(ended.signal.aborted).toBe(true);
    ended.release();
  });

  it('does not abort when the answer finished normally', async () => {
    const served = serve();
    const done = new Promise(resolve =>
      http.get(`http://127.0.0.1:${port}/`, r => r.resume().on('end', resolve)),
    );
    const res = await served;
    const ended = callEndSignal(res, []);
    res.end('whole answer');
    await done;
    await new Promise(resolve => setImmediate(resolve));
    expect(ended.signal.aborted).toBe(false);
    ended.release();
  });

  it('aborts when a source aborts, also one that aborted before, and leaves no listener on the sources after release', async () => {
    const served = serve();
    http.get(`http://127.0.0.1:${port}/`).on('error', () => undefined);
    const res = await served;
    const session = new AbortController();
    const broker = new AbortController();
    const ended = callEndSignal(res, [session.signal, broker.signal]);
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(broker.signal, 'abort')).toHaveLength(1);
    session.abort();
    expect(ended.signal.aborted).toBe(true);
    ended.release();
    expect(getEventListeners(broker.signal, 'abort')).toHaveLength(0);
    expect(res.listenerCount('close')).toBe(0);

    const already = callEndSignal(res, [session.signal]);
    expect(already.signal.aborted).toBe(true);
    already.release();
    res.end();
  });
});
