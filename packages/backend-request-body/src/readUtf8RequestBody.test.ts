/*
 * readUtf8RequestBody on a real HTTP server, driven byte by byte with node:http requests
 * that declare their own lengths and send (or withhold) body bytes: declared and counted
 * limits, slow bodies, charsets, encodings and UTF-8 validity.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { readUtf8RequestBody, type ReadUtf8RequestBodyOptions } from './readUtf8RequestBody';

interface Answer {
  status: number;
  connection: string | undefined;
  body: { text?: string | null; failure?: string; message?: string };
  /** Sends more of the body after the answer (a client still writing), and optionally ends it. */
  sendMore(parts: Array<string | Buffer>, end?: boolean): void;

  /** Resolves when the connection has closed: `reset` when it ended with an error on this side. */
  closed: Promise<{ reset: boolean }>;
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
    let reset = false;
    const closed = new Promise<{ reset: boolean }>(done =>
      req.once('close', () => done({ reset })),
    );
    req.on('error', () => {
      // Writing to a connection the server has cut (EPIPE, ECONNRESET).
      reset = true;
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
          sendMore(more, endIt = false) {
            for (const part of more) req.write(part);
            if (endIt) req.end();
          },

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

const MiB = Buffer.alloc(1024 * 1024, 0x20);

/** A client on a raw socket: what it saw, and how its connection ended. */
interface RawClient {
  /** The whole answer (head and body), as text. */
  answer: string;
  /** Writes more body once the socket has taken the previous bytes; false once it is closed. */
  write(part: Buffer): Promise<boolean>;
  /** Ends this side (the whole body is sent). */
  end(): void;
  /** How the connection ended: the socket error of this side (a reset), if any. */
  closed: Promise<{ error: string | undefined }>;
}

/**
 * Sends a POST's head declaring `contentLength` body bytes, and resolves once the whole answer
 * has arrived, before any body byte was sent: a client that sends its body only now.
 */
function rawClient(port: number, contentLength: number): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    // Half-open allowed: it goes on sending after the server has closed its side (FIN), as a
    // client busy uploading does; a default socket would stop sending at the FIN.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let error: string | undefined;
    const closed = new Promise<{ error: string | undefined }>(done =>
      socket.once('close', () => done({ error })),
    );
    socket.on('error', e => {
      error = (e as NodeJS.ErrnoException).code ?? e.message;
    });
    let received = '';
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const headEnd = received.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(received.slice(0, headEnd))?.[1];
      if (headEnd < 0 || length === undefined || received.length < headEnd + 4 + Number(length))
        return;
      socket.off('data', onData);
      resolve({
        answer: received,
        closed,
        end: () => socket.end(),
        write: part =>
          new Promise<boolean>(done => {
            if (socket.destroyed || error !== undefined) {
              done(false);
              return;
            }
            socket.write(part, e => done(e === undefined || e === null));
          }),
      });
    };
    socket.on('data', onData);
    socket.once('connect', () =>
      socket.write(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${contentLength}\r\n\r\n`,
      ),
    );
    closed.then(() => reject(new Error(`closed before the answer: ${received}`)));
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
  });

  it('answers first, then reads what a client still sends before it closes (no reset)', async () => {
    const port = await startServer(LIMITS);
    const size = 2 * 1024 * 1024;
    const client = await rawClient(port, size);
    expect(client.answer).toMatch(/^HTTP\/1\.1 413 [^]*connection: close/i);
    // The client only now sends its body: the server reads it (and throws it away) before it
    // closes. Closing at once would answer these bytes with a reset.
    for (let sent = 0; sent < size; sent += MiB.length) {
      if (!(await client.write(MiB))) break;
    }
    client.end();
    expect(await client.closed).toEqual({ error: undefined });
  });

  it('cuts off a refused body once more than 64 MiB of it arrived after the answer', async () => {
    const port = await startServer(LIMITS);
    const client = await rawClient(port, 1024 ** 3);
    expect(client.answer).toMatch(/^HTTP\/1\.1 413 /);
    let sent = 0;
    while (sent < 256 * MiB.length && (await client.write(MiB))) sent += MiB.length;
    expect(await client.closed).toEqual({ error: expect.stringMatching(/ECONNRESET|EPIPE/) });
    expect(sent).toBeGreaterThan(64 * MiB.length);
    expect(sent).toBeLessThan(256 * MiB.length);
  });

  it('counts a chunked body as it arrives and refuses it once it passes the limit', async () => {
    const port = await startServer(LIMITS);
    // Transfer-Encoding: chunked, no Content-Length; the body ends only after the answer.
    const answer = await send(port, JSON_TYPE, ['x'.repeat(600), 'x'.repeat(600)]);
    expect(answer.status).toBe(413);
    expect(answer.body.message).toBe('request body is larger than the 1 KiB limit');
    expect(answer.connection).toBe('close');
    answer.sendMore(['x'.repeat(600)], true);
    expect(await answer.closed).toEqual({ reset: false });
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
    answer.sendMore(['x'.repeat(95)], true);
    expect(await answer.closed).toEqual({ reset: false });
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
      answer.sendMore(['x'.repeat(100)], true);
      expect(await answer.closed).toEqual({ reset: false });
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
