/*
 * One HTTP/1.1 exchange over a raw TCP socket, for end-to-end tests about bytes and timing
 * that fetch cannot express: a Content-Length that the body never reaches, a body sent in
 * pieces or never finished, bytes that are not UTF-8. The answer resolves as soon as the
 * response is complete, while the request may still be unfinished on the client side.
 */
import net from 'node:net';

/** A parsed response. */
export interface RawHttpResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
}

/** Options of {@link rawHttpRequest}. */
export interface RawHttpRequest {
  port: number;
  method: string;
  path: string;
  /** Sent as given, after `Host`; add `content-length` or `transfer-encoding` yourself. */
  headers: Record<string, string>;
  /** Body bytes, written in order as separate writes (chunked framing is the caller's). */
  bodyParts?: Array<string | Buffer>;
}

/** Sends the request (which may leave its body unfinished) and resolves with the response. */
export function rawHttpRequest(request: RawHttpRequest): Promise<RawHttpResponse> {
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    `Host: 127.0.0.1:${request.port}`,
    ...Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: request.port });
    const closed = new Promise<void>(done => socket.once('close', () => done()));
    let received = Buffer.alloc(0);
    let answered = false;
    const tryParse = (ended: boolean) => {
      const headerEnd = received.indexOf('\r\n\r\n');
      if (answered || headerEnd < 0) return;
      const [statusLine, ...lines] = received
        .subarray(0, headerEnd)
        .toString('latin1')
        .split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = received.subarray(headerEnd + 4);
      const length = headers['content-length'];
      if (length === undefined ? !ended : body.length < Number(length)) return;
      answered = true;
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: body.toString('utf8'),
        closed,
      });
    };
    socket.on('data', chunk => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.once('end', () => {
      tryParse(true);
      if (!answered)
        reject(new Error(`the server closed the connection without an answer: ${received}`));
    });
    socket.on('error', error => {
      // A reset after the answer (the server closed while the body was still coming) is fine.
      if (!answered) reject(error);
    });
    socket.write(head);
    for (const part of request.bodyParts ?? []) socket.write(part);
  });
}
