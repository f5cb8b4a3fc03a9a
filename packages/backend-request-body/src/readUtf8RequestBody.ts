/*
 * Reads one HTTP request body as UTF-8 text, with hard limits, for plugins that parse
 * JSON themselves (body-parser is not used: on a limit it keeps reading the whole body
 * before it answers, so a slow 20 MB body held a socket for minutes).
 *
 * Guarantees, in this order, before the plugin sees a byte:
 * - a declared charset other than UTF-8, or any Content-Encoding but `identity`, is refused
 *   from the headers alone (415);
 * - a declared Content-Length over the limit is refused at once, nothing read (413);
 * - a body without Content-Length (chunked) is counted as it arrives and refused the moment
 *   it passes the limit (413);
 * - a body that has not fully arrived `timeoutMs` after reading began is refused (408);
 * - bytes that are not valid UTF-8 are refused (400), never replaced by U+FFFD.
 *
 * Failure modes: every refusal rejects with a {@link RequestBodyError}; the caller renders
 * it in its own error format. When body bytes may still be on the way, the response is
 * marked `Connection: close` and the connection is closed the way careful servers do (a
 * lingering close, see {@link closeAfterAnswer}): the answer first, then what the client still
 * sends is read and thrown away — at most LINGER_MAX_BYTES, for at most LINGER_MAX_MS — so that
 * a client still writing its body can read why it was refused instead of a reset.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestBodyError, type RequestBodyFailure } from './RequestBodyError';

const UTF8_NAMES = new Set(['utf-8', 'utf8']);

/** Most bytes of a refused body read and thrown away after the answer (then the socket is cut). */
const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/** Longest time a refused body is read and thrown away after the answer (nginx: 30 s). */
const LINGER_MAX_MS = 30_000;

/**
 * Ends the connection after the answer without cutting off a client that is still sending.
 * Closing at once (Node's default after `Connection: close`) makes the kernel answer the bytes
 * still arriving with a reset, and a reset makes the client drop what it has received and not
 * read yet: a client still writing a large body often saw a broken connection instead of the
 * 413 or 401. So once the answer is written (Node then calls `destroySoon`), this side is closed
 * (FIN), and what still arrives is read and discarded until the body is complete or the client
 * ends, or LINGER_MAX_BYTES more arrived, or LINGER_MAX_MS passed; then the socket is destroyed.
 */
function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  // The rest of the body is not wanted: the HTTP parser keeps taking it off the wire, and it is
  // dropped as it comes (counted, below, once the answer is out).
  let discarded = 0;
  let lingering = false;
  const socket = req.socket;
  let timer: NodeJS.Timeout | undefined;
  const cut = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  req.on('data', (chunk: Buffer) => {
    if (!lingering) return;
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  req.resume();
  const closeNow = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    // The whole body is in already: nothing is on its way, close as usual.
    if (req.complete) {
      closeNow();
      return;
    }
    lingering = true;
    timer = setTimeout(cut, LINGER_MAX_MS);
    timer.unref();
    // The client has sent the whole body; its closing its side ends the socket by itself.
    req.once('end', cut);
    socket.once('close', () => clearTimeout(timer));
    socket.end();
  };
}

/**
 * Limits of {@link readUtf8RequestBody}.
 *
 * @public
 */
export interface ReadUtf8RequestBodyOptions {
  /** Largest accepted body, in bytes (declared or counted). */
  maxBytes: number;
  /** Longest time, in milliseconds, the whole body may take to arrive once reading begins. */
  timeoutMs: number;
}

/**
 * Reads the request's body as UTF-8 text within the limits. Resolves `undefined` for a
 * request without a body (neither Content-Length nor Transfer-Encoding), `''` for an empty
 * one. Rejects with {@link RequestBodyError}; see the package README for the guarantees.
 *
 * @public
 */
export function readUtf8RequestBody(
  req: IncomingMessage,
  res: ServerResponse,
  options: ReadUtf8RequestBodyOptions,
): Promise<string | undefined> {
  const { maxBytes, timeoutMs } = options;
  const refuse = (failure: RequestBodyFailure, message: string) => {
    closeAfterAnswer(req, res);
    return Promise.reject(new RequestBodyError(failure, message));
  };

  const lengthHeader = req.headers['content-length'];
  if (lengthHeader === undefined && req.headers['transfer-encoding'] === undefined) {
    return Promise.resolve(undefined);
  }
  if (req.readableEnded) {
    return Promise.reject(new Error('the request body was already read by another handler'));
  }
  const charset = declaredCharset(req.headers['content-type']);
  if (charset !== undefined && !UTF8_NAMES.has(charset.toLowerCase())) {
    return refuse(
      'unsupported-charset',
      `request body must be UTF-8, but Content-Type declares charset "${clip(charset)}"; ` +
        'send charset=utf-8 or no charset',
    );
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return refuse(
      'unsupported-encoding',
      `Content-Encoding "${clip(encoding)}" is not supported; send the body uncompressed`,
    );
  }
  const limit = describeBytes(maxBytes);
  if (lengthHeader !== undefined && Number(lengthHeader) > maxBytes) {
    return refuse(
      'too-large',
      `request body of ${lengthHeader} bytes is larger than the ${limit} limit`,
    );
  }

  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const timer = setTimeout(() => {
      fail(
        'timeout',
        `request body did not arrive within ${describeMilliseconds(timeoutMs)}; ` +
          'send the whole body at once',
      );
    }, timeoutMs);
    function settle() {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onIncomplete);
      req.off('error', onIncomplete);
    }
    function fail(failure: RequestBodyFailure, message: string) {
      settle();
      refuse(failure, message).catch(reject);
    }
    function onData(chunk: Buffer) {
      received += chunk.length;
      if (received > maxBytes) {
        fail('too-large', `request body is larger than the ${limit} limit`);
        return;
      }
      chunks.push(chunk);
    }
    function onEnd() {
      settle();
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)));
      } catch {
        reject(
          new RequestBodyError(
            'invalid-utf8',
            'request body is not valid UTF-8; encode the JSON text as UTF-8',
          ),
        );
      }
    }
    function onIncomplete() {
      fail('incomplete', 'the connection closed before the whole request body arrived');
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onIncomplete);
    req.on('error', onIncomplete);
  });
}

/** The `charset` parameter of a Content-Type header, quoted or not; undefined without one. */
function declaredCharset(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

/** Client text echoed in a message, kept short. */
function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

function describeMilliseconds(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
