/*
 * Issue #20 items 1 and 2 on the real backend process, over raw sockets: oversize bodies are
 * refused on their declared length before they arrive (413 at once), chunked ones as soon as
 * they pass the limit, slow ones within the configured time (408; a short limit here, 30 s
 * by default), and JSON bodies must be UTF-8 (415 for another declared charset, 400 for
 * invalid bytes) — on the portal's routes (Backstage error bodies) and on the broker's MCP
 * endpoint (JSON-RPC error bodies). Every refusal closes the connection.
 */
import { rawHttpRequest, type RawHttpResponse } from '../testing/rawHttp';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';

const BODY_TIMEOUT = '300ms';
const BROKER_MAX_BODY_BYTES = 100_000;
const MCP = '/api/mcp-broker/mcp';

describe('request body limits and encodings (real process, raw sockets)', () => {
  let backend: BackendProcess;
  let token: string;

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: {
        portal: { requestBodyTimeout: BODY_TIMEOUT },
        mcpBroker: {
          servers: [],
          requestBodyTimeout: BODY_TIMEOUT,
          maxRequestBodyBytes: BROKER_MAX_BODY_BYTES,
        },
      },
    });
    token = await backend.signIn('alice');
  }, 90_000);

  afterAll(async () => {
    await backend?.stop();
  });

  const send = (
    method: string,
    path: string,
    headers: Record<string, string>,
    bodyParts: Array<string | Buffer> = [],
  ) =>
    rawHttpRequest({
      port: backend.port,
      method,
      path,
      headers: { authorization: `Bearer ${token}`, ...headers },
      bodyParts,
    });

  /** The answer is a Backstage error body with this status, and the connection closes. */
  async function expectPortalRefusal(answer: RawHttpResponse, status: number, name: string) {
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { name, message: expect.any(String) },
      request: { method: expect.any(String), url: expect.any(String) },
      response: { statusCode: status },
    });
    expect(answer.headers.connection).toBe('close');
    await answer.closed;
    return JSON.parse(answer.body).error.message as string;
  }

  /** The answer is a JSON-RPC error body with this HTTP status, and the connection closes. */
  async function expectMcpRefusal(answer: RawHttpResponse, status: number, code: number) {
    expect(answer.status).toBe(status);
    const body = JSON.parse(answer.body);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
    expect(answer.headers.connection).toBe('close');
    await answer.closed;
    return body.error.message as string;
  }

  const json = { 'content-type': 'application/json' };
  const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`;

  describe('portal', () => {
    it('refuses a declared 20 MB body with 413 before it arrives, on any route', async () => {
      for (const [method, path] of [
        ['POST', '/api/portal/requests'],
        ['GET', '/api/portal/apiproducts'],
        ['POST', '/api/portal/requests/bulk-approve'],
      ]) {
        const answer = await send(method, path, { ...json, 'content-length': '20000000' }, [
          '{"a"',
        ]);
        expect(await expectPortalRefusal(answer, 413, 'PayloadTooLargeError')).toBe(
          'request body of 20000000 bytes is larger than the 64 KiB limit',
        );
      }
    });

    it('refuses a chunked body (no Content-Length) once it passes 64 KiB', async () => {
      const answer = await send(
        'POST',
        '/api/portal/requests',
        { ...json, 'transfer-encoding': 'chunked' },
        [chunk(`{"useCase":"${'x'.repeat(40 * 1024)}`), chunk('x'.repeat(40 * 1024))],
      );
      expect(await expectPortalRefusal(answer, 413, 'PayloadTooLargeError')).toMatch(/64 KiB/);
    });

    it('answers 408 when the body does not arrive within portal.requestBodyTimeout', async () => {
      const answer = await send(
        'POST',
        '/api/portal/requests',
        { ...json, 'content-length': '100' },
        ['{"planTier":'],
      );
      expect(await expectPortalRefusal(answer, 408, 'RequestTimeoutError')).toBe(
        'request body did not arrive within 300 ms; send the whole body at once',
      );
    });

    it.each([
      ['application/json; charset=utf-7', 'POST', '/api/portal/requests'],
      ['application/json; charset=utf-16', 'POST', '/api/portal/requests'],
      ['application/json; charset=latin1', 'POST', '/api/portal/apiproducts'],
      [
        'application/merge-patch+json; charset=utf-16',
        'PATCH',
        '/api/portal/apiproducts/toystore/x',
      ],
    ])('refuses %s with 415', async (contentType, method, path) => {
      const body = '{"useCase":"+ADw-script+AD4-alert(1)+ADw-/script+AD4-"}';
      const answer = await send(
        method,
        path,
        { 'content-type': contentType, 'content-length': `${body.length}` },
        [body],
      );
      expect(await expectPortalRefusal(answer, 415, 'UnsupportedMediaTypeError')).toMatch(
        /request body must be UTF-8, but Content-Type declares charset/,
      );
    });

    it('refuses bytes that are not UTF-8 with 400 instead of storing U+FFFD', async () => {
      const body = Buffer.concat([
        Buffer.from(
          '{"apiProductRef":{"namespace":"toystore","name":"x"},"planTier":"gold","useCase":"',
        ),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]);
      const answer = await send(
        'POST',
        '/api/portal/requests',
        { ...json, 'content-length': `${body.length}` },
        [body],
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toMatchObject({
        name: 'InputError',
        message: 'request body is not valid UTF-8; encode the JSON text as UTF-8',
      });
    });
  });

  describe('MCP endpoint', () => {
    const mcpHeaders = { ...json, accept: 'application/json, text/event-stream' };

    it('refuses a declared body over mcpBroker.maxRequestBodyBytes with 413 before it arrives', async () => {
      const answer = await send('POST', MCP, { ...mcpHeaders, 'content-length': '20000000' }, [
        '{"jsonrpc"',
      ]);
      expect(await expectMcpRefusal(answer, 413, -32600)).toBe(
        `request body of 20000000 bytes is larger than the ${BROKER_MAX_BODY_BYTES} bytes limit`,
      );
      const justOver = await send('POST', MCP, {
        ...mcpHeaders,
        'content-length': `${BROKER_MAX_BODY_BYTES + 1}`,
      });
      await expectMcpRefusal(justOver, 413, -32600);
    });

    it('refuses a chunked body once it passes the limit', async () => {
      const answer = await send('POST', MCP, { ...mcpHeaders, 'transfer-encoding': 'chunked' }, [
        chunk(`{"jsonrpc":"2.0","method":"x","params":{"a":"${'x'.repeat(60_000)}`),
        chunk('x'.repeat(60_000)),
      ]);
      expect(await expectMcpRefusal(answer, 413, -32600)).toMatch(
        /larger than the 100000 bytes limit/,
      );
    });

    it('answers 408 when the body does not arrive within mcpBroker.requestBodyTimeout', async () => {
      const answer = await send('POST', MCP, { ...mcpHeaders, 'content-length': '100' }, [
        '{"jsonrpc":',
      ]);
      expect(await expectMcpRefusal(answer, 408, -32600)).toBe(
        'request body did not arrive within 300 ms; send the whole body at once',
      );
    });

    it.each(['utf-7', 'utf-16', 'latin1'])('refuses charset=%s with 415', async charset => {
      const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      const answer = await send(
        'POST',
        MCP,
        {
          ...mcpHeaders,
          'content-type': `application/json; charset=${charset}`,
          'content-length': `${body.length}`,
        },
        [body],
      );
      expect(await expectMcpRefusal(answer, 415, -32600)).toMatch(/must be UTF-8/);
    });

    it('refuses bytes that are not UTF-8 with 400 and a parse error', async () => {
      const body = Buffer.concat([
        Buffer.from(
          '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"',
        ),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}}}'),
      ]);
      const answer = await send(
        'POST',
        MCP,
        { ...mcpHeaders, 'content-length': `${body.length}` },
        [body],
      );
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({
        jsonrpc: '2.0',
        error: {
          code: -32700,
          message: 'request body is not valid UTF-8; encode the JSON text as UTF-8',
        },
      });
    });
  });

  it('answers a 10 MiB body, with a token or without, instead of breaking the connection (fetch)', async () => {
    const body = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      for (const path of [MCP, '/api/portal/requests']) {
        for (const authorization of [undefined, `Bearer ${token}`]) {
          try {
            const response = await fetch(`${backend.baseUrl}${path}`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                ...(authorization && { authorization }),
              },
              body,
            });
            await response.text();
            outcomes.push(`${path} ${authorization ? 'token' : 'none'} ${response.status}`);
          } catch (error) {
            const cause = (error as { cause?: { code?: string } }).cause?.code;
            outcomes.push(`${path} ${authorization ? 'token' : 'none'} broken (${cause})`);
          }
        }
      }
    }
    // Each answer arrived: the refusal is read by a client still writing its body.
    expect(new Set(outcomes)).toEqual(
      new Set([
        `${MCP} none 401`,
        `${MCP} token 413`,
        '/api/portal/requests none 401',
        '/api/portal/requests token 413',
      ]),
    );
  }, 60_000);
});
