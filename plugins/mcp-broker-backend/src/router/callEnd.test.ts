/* callEnd on real HTTP responses (a loopback server), with the broker's long-lived signals. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { callEnd } from './callEnd';

describe('callEnd', () => {
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

  it('is gone, and tells its watcher once, when the client disconnects before the answer is finished', async () => {
    const served = serve();
    const request = http.get(`http://127.0.0.1:${port}/`);
    request.on('error', () => undefined);
    const res = await served;
    const ended = callEnd(res, [new AbortController().signal]);
    const watcher = jest.fn();
    ended.watch(watcher);
    res.writeHead(200).write('partial');
    request.destroy();
    await new Promise(resolve => res.on('close', resolve));
    expect(ended.gone).toBe(true);
    expect(watcher).toHaveBeenCalledTimes(1);
    ended.release();
  });

  it('is not gone when the answer finished normally', async () => {
    const served = serve();
    const done = new Promise(resolve =>
      http.get(`http://127.0.0.1:${port}/`, r => r.resume().on('end', resolve)),
    );
    const res = await served;
    const ended = callEnd(res, []);
    const watcher = jest.fn();
    ended.watch(watcher);
    res.end('whole answer');
    await done;
    await new Promise(resolve => setImmediate(resolve));
    expect(ended.gone).toBe(false);
    expect(watcher).not.toHaveBeenCalled();
    ended.release();
  });

  it('is gone when a source aborts, also one that aborted before, and leaves no listener on the sources after release', async () => {
    const served = serve();
    http.get(`http://127.0.0.1:${port}/`).on('error', () => undefined);
    const res = await served;
    const session = new AbortController();
    const broker = new AbortController();
    const ended = callEnd(res, [session.signal, broker.signal]);
    expect(getEventListeners(session.signal, 'abort')).toHaveLength(1);
    expect(getEventListeners(broker.signal, 'abort')).toHaveLength(1);
    const watcher = jest.fn();
    ended.watch(watcher);
    session.abort();
    expect(ended.gone).toBe(true);
    expect(watcher).toHaveBeenCalledTimes(1);
    // A source aborting after the call ended reaches nobody.
    broker.abort();
    expect(watcher).toHaveBeenCalledTimes(1);
    ended.release();
    expect(getEventListeners(broker.signal, 'abort')).toHaveLength(0);
    expect(res.listenerCount('close')).toBe(0);

    const already = callEnd(res, [session.signal]);
    expect(already.gone).toBe(true);
    const late = jest.fn();
    already.watch(late); // watching a call that is already gone tells the watcher at once
    expect(late).toHaveBeenCalledTimes(1);
    already.release();
    res.end();
  });
});
