/*
 * readUtf8RequestBody on a real HTTP server, driven byte by byte with node:http requests
 * that declare their own lengths and send (or withhold) body bytes: declared and counted
 * limits, slow bodies, charsets, encodings and UTF-8 validity.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readUtf8RequestBody, type ReadUtf8RequestBodyOptions } from './readUtf8RequestBody';

interface Answer {
  status: number;
  connection: string | undefined;
  body: { text?: string | null; failure?: string; message?: string };
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

let server: http.Server | undefined;

async function startServer(options: ReadUtf8RequestBodyOptions): Promise<number> {
  server = http.createServer((req, res) => {
    readUtf8RequestBody(req, res, options).then(
      text => res.end(JSON.stringify({ text: text ?? null })),
      error => {
        res.statusCode = error.status ?? 500;
        res.end(JSON.stringify({ failure: error.failure, message: error.message }));
      },
    );
  });
  await new Promise<void>(resolve => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise(resolve => server?.close(resolve));
  server = undefined;
});

/**
 * Sends headers and `parts`, ends the body only when `end` is set, and resolves with the
 * answer as soon as it is complete (the body may still be unfinished on the client side).
 */
function send(
  port: number,
  headers: Record<string, string>,
  parts: Array<string | Buffer> = [],
  end = false,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers, agent: false });
    const closed = new Promise<void>(done => req.once('close', () => done()));
    req.on('error', () => {
      // The server may close while the client still writes; the answer is what counts.
    });
    req.once('response', res => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', chunk => (text += chunk));
      res.once('end', () =>
        resolve({
          status: res.statusCode!,
          connection: res.headers.connection,
          body: JSON.parse(text),
          closed,
        }),
      );
      res.once('error', reject);
    });
    req.flushHeaders();
    for (const part of parts) req.write(part);
    if (end) req.end();
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const LIMITS = { maxBytes: 1024, timeoutMs: 60_000 };

describe('readUtf8RequestBody', () => {
  it('refuses a declared Content-Length over the limit before any body byte arrives', async () => {
    const port = await startServer(LIMITS);
    const answer = await send(port, { ...JSON_TYPE, 'content-length': '20000000' });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({
      failure: 'too-large',
      message: 'request body of 20000000 bytes is larger than the 1 KiB limit',
    });
    expect(answer.connection).toBe('close');
    await answer.closed;
  });

  it('counts a chunked body as it arrives and refuses it once it passes the limit', async () => {
    const port = await startServer(LIMITS);
    // Transfer-Encoding: chunked, no Content-Length; the body never ends on the client side.
    const answer = await send(port, JSON_TYPE, ['x'.repeat(600), 'x'.repeat(600)]);
    expect(answer.status).toBe(413);
    expect(answer.body.message).toBe('request body is larger than the 1 KiB limit');
    expect(answer.connection).toBe('close');
    await answer.closed;
  });

  it('answers 408 when the body does not arrive within the time limit, and closes', async () => {
    const port = await startServer({ maxBytes: 1024, timeoutMs: 100 });
    const answer = await send(port, { ...JSON_TYPE, 'content-length': '100' }, ['{"a":']);
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual({
      failure: 'timeout',
      message: 'request body did not arrive within 100 ms; send the whole body at once',
    });
    expect(answer.connection).toBe('close');
    await answer.closed;
  });

  it.each(['utf-7', 'utf-16', 'UTF-16LE', 'latin1', 'iso-8859-1', '"utf-32"'])(
    'refuses charset=%s with 415 from the headers alone',
    async charset => {
      const port = await startServer(LIMITS);
      const answer = await send(
        port,
        { 'content-type': `application/json; charset=${charset}`, 'content-length': '100' },
        [],
      );
      expect(answer.status).toBe(415);
      expect(answer.body.failure).toBe('unsupported-charset');
      expect(answer.body.message).toContain(charset.replace(/"/g, ''));
      await answer.closed;
    },
  );

  it.each(['utf-8', 'UTF-8', 'utf8', '"utf-8"'])('accepts charset=%s', async charset => {
    const port = await startServer(LIMITS);
    const answer = await send(
      port,
      { 'content-type': `application/merge-patch+json; charset=${charset}` },
      ['{"a":"é"}'],
      true,
    );
    expect(answer).toMatchObject({ status: 200, body: { text: '{"a":"é"}' } });
  });

  it('refuses a compressed body with 415', async () => {
    const port = await startServer(LIMITS);
    const answer = await send(port, { ...JSON_TYPE, 'content-encoding': 'gzip' }, ['x'], true);
    expect(answer.status).toBe(415);
    expect(answer.body.message).toBe(
      'Content-Encoding "gzip" is not supported; send the body uncompressed',
    );
  });

  it('refuses bytes that are not UTF-8 with 400 instead of storing U+FFFD', async () => {
    const port = await startServer(LIMITS);
    const body = Buffer.concat([
      Buffer.from('{"useCase":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const answer = await send(port, JSON_TYPE, [body], true);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      failure: 'invalid-utf8',
      message: 'request body is not valid UTF-8; encode the JSON text as UTF-8',
    });
  });

  it('reads a body that arrives in pieces, a character split across two of them', async () => {
    const port = await startServer(LIMITS);
    const euro = Buffer.from('€');
    const answer = await send(
      port,
      JSON_TYPE,
      [
        Buffer.concat([Buffer.from('"'), euro.subarray(0, 1)]),
        Buffer.concat([euro.subarray(1), Buffer.from('"')]),
      ],
      true,
    );
    expect(answer).toMatchObject({ status: 200, body: { text: '"€"' } });
  });

  it('accepts a body of exactly the limit', async () => {
    const port = await startServer(LIMITS);
    const answer = await send(
      port,
      { ...JSON_TYPE, 'content-length': '1024' },
      ['y'.repeat(1024)],
      true,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.text).toHaveLength(1024);
  });

  it('resolves undefined without a body and an empty string for an empty one', async () => {
    const port = await startServer(LIMITS);
    const none = await new Promise<string>((resolve, reject) => {
      http
        .get({ port, host: '127.0.0.1', agent: false }, res => {
          let text = '';
          res.on('data', chunk => (text += chunk));
          res.once('end', () => resolve(text));
        })
        .once('error', reject);
    });
    expect(JSON.parse(none)).toEqual({ text: null });
    const empty = await send(port, { ...JSON_TYPE, 'content-length': '0' }, [], true);
    expect(empty.body).toEqual({ text: '' });
  });
});
