/*
 * A front for a real MCP server that answers chosen JSON-RPC methods with an HTTP error (or a
 * page that is no MCP message) when they arrive without a session, the way some 2025-11-25
 * servers answer a method they do not know (`server/discover`) with HTTP 500, and forwards
 * everything else unchanged, event streams
 * included (node:http, no buffering of responses). Closing the front ends every forwarded
 * exchange; the server behind it is the test's to close.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardHttp } from '../../testing/forwardHttp';

/** What the front answers to the chosen methods. */
export interface FrontAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** A generic server error page. */
export const HTTP_500_ANSWER: FrontAnswer = {
  status: 500,
  contentType: 'text/plain',
  body: 'Internal Server Error',
};

/** A running {@link startFailingMethodsFront}. */
export interface FailingMethodsFront {
  /** The front's MCP endpoint (same path as the server behind it). */
  url: string;
  /** The methods answered with the error so far, in arrival order. */
  failed(): string[];
  close(): Promise<void>;
}

function methodOf(body: Buffer): string | undefined {
  try {
    const method = (JSON.parse(body.toString('utf8')) as { method?: unknown }).method;
    return typeof method === 'string' ? method : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts a front on 127.0.0.1 for `targetUrl` that answers sessionless POSTs of `methods` with
 * `answer` (by default HTTP 500 with a plain-text body, as a generic server error page).
 */
export async function startFailingMethodsFront(
  targetUrl: string,
  methods: ReadonlyArray<string>,
  answer: FrontAnswer = HTTP_500_ANSWER,
): Promise<FailingMethodsFront> {
  const target = new URL(targetUrl);
  const failed: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const sessionless = req.headers['mcp-session-id'] === undefined;
      const method = req.method === 'POST' && sessionless ? methodOf(body) : undefined;
      if (method !== undefined && methods.includes(method)) {
        failed.push(method);
        res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
        return;
      }
      forwardHttp(target, req, res, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    failed: () => [...failed],
    async close() {
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}
