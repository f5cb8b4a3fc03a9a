/*
 * `Mcp-Param-*` headers (MCP 2026-07-28, `x-mcp-header`) through the real backend process: the
 * modern example server's `regional_echo` marks `region` with `x-mcp-header: "Region"` and
 * answers with the `Mcp-Param-Region` header as it arrived (still encoded), failing when a modern
 * request has the argument without the header. The broker, a client of that backend, mirrors
 * the argument for every caller (the official SDK v2 client pinned to 2026-07-28 and an SDK 1.x
 * client); as a server it checks the headers of 2026-07-28 clients against the body (400,
 * -32020) and leaves legacy-era requests alone.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernClientTransport,
} from '@modelcontextprotocol/client';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { connectBrokerClient, waitFor } from './brokerTestKit';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import {
  connectModernClient,
  MODERN_PROTOCOL_VERSION,
  modernToolCall,
} from './__testUtils__/modernBrokerClient';

const TOOL = 'modern_regional_echo';
/** The specification's example of a value that needs Base64 (streamable-http.mdx). */
const NON_ASCII = 'Hello, 世界';
const NON_ASCII_HEADER = '=?base64?SGVsbG8sIOS4lueVjA==?=';

describe('Mcp-Param-* headers through the broker in the real backend process', () => {
  let fleet: ExampleFleet;
  let backend: BackendProcess;
  let carol: string;
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    fleet = await startExampleFleet();
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: fleet.servers } },
    });
    // Carol (portal-admin) may use every tool: this is about headers, not access control.
    carol = await backend.signIn('carol');
    await waitFor(
      async () => {
        const client = await connectBrokerClient(backend.baseUrl, carol);
        try {
          return (await client.client.listTools()).tools.some(t => t.name === TOOL);
        } finally {
          await client.close();
        }
      },
      30_000,
      `${TOOL} in the broker's tools/list`,
    );
  }, 120_000);

  afterEach(async () => {
    for (const close of closers.splice(0)) await close().catch(() => undefined);
  });

  afterAll(async () => {
    await backend?.stop();
    await fleet?.close();
  }, 30_000);

  async function modernClient() {
    const modern = await connectModernClient(backend.baseUrl, carol);
    closers.push(() => modern.close());
    return modern;
  }

  async function legacyClient(headers: Record<string, string> = {}) {
    const legacy = new Client({ name: 'broker-e2e-params', version: '1.0.0' });
    await legacy.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${carol}`, ...headers } },
      }),
    );
    closers.push(() => legacy.close());
    return legacy;
  }

  const textOf = (result: unknown) =>
    (result as { content: Array<{ type: string; text: string }> }).content[0].text;

  it('re-advertises the backend’s x-mcp-header annotation unchanged', async () => {
    const modern = await modernClient();
    const tool = (await modern.listTools()).tools.find(t => t.name === TOOL);
    expect(tool?.inputSchema.properties).toMatchObject({
      region: { type: 'string', 'x-mcp-header': 'Region' },
    });
  }, 30_000);

  it('mirrors an SDK v2 client’s argument, plain ASCII as is, other text in Base64', async () => {
    const modern = await modernClient();
    await modern.listTools();
    const plain = await modern.callTool({
      name: TOOL,
      arguments: { region: 'us-west1', message: 'hi' },
    });
    expect(plain.isError).toBeFalsy();
    expect(textOf(plain)).toBe('hi from us-west1 (Mcp-Param-Region: us-west1)');
    const encoded = await modern.callTool({
      name: TOOL,
      arguments: { region: NON_ASCII, message: 'hi' },
    });
    expect(textOf(encoded)).toBe(`hi from ${NON_ASCII} (Mcp-Param-Region: ${NON_ASCII_HEADER})`);
  }, 30_000);

  it('lets an SDK v2 client without the tool’s schema recover from -32020', async () => {
    // Without the tool's schema the SDK sends no Mcp-Param header; the broker's HeaderMismatch
    // makes it fetch tools/list and retry with the header (the specification's SHOULD).
    const callStatuses: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const method = new Headers(init?.headers).get('mcp-method');
      if (method === 'tools/call') callStatuses.push(response.status);
      return response;
    };
    const modern = new ModernClient(
      { name: 'broker-e2e-params', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } },
    );
    await modern.connect(
      new ModernClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${carol}` } },
        fetch: recording,
      }),
    );
    closers.push(() => modern.close());
    const result = await modern.callTool({
      name: TOOL,
      arguments: { region: 'us-west1', message: 'again' },
    });
    expect(textOf(result)).toBe('again from us-west1 (Mcp-Param-Region: us-west1)');
    expect(callStatuses).toEqual([400, 200]);
  }, 30_000);

  it('mirrors an SDK 1.x client’s argument and ignores the header it sends', async () => {
    // A legacy-era request is not checked: its stray header is neither refused nor forwarded.
    const legacy = await legacyClient({ 'Mcp-Param-Region': 'nowhere' });
    const result = await legacy.callTool({
      name: TOOL,
      arguments: { region: NON_ASCII, message: 'hi' },
    });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(`hi from ${NON_ASCII} (Mcp-Param-Region: ${NON_ASCII_HEADER})`);
  }, 30_000);

  it('sends no header when the argument is absent', async () => {
    const legacy = await legacyClient();
    const result = await legacy.callTool({ name: TOOL, arguments: { message: 'hi' } });
    expect(textOf(result)).toBe('hi from undefined (no Mcp-Param-Region header)');
  }, 30_000);

  it('refuses a 2026-07-28 call with a missing or different Mcp-Param (400)', async () => {
    const call = (headers: Record<string, string>) =>
      modernToolCall(
        backend.baseUrl,
        carol,
        7,
        { name: TOOL, arguments: { region: 'eu-west1', message: 'hi' } },
        {},
        headers,
      );

    const missing = await call({});
    expect(missing.status).toBe(400);
    expect(missing.response.error).toMatchObject({
      code: -32020,
      message: expect.stringContaining(
        'the Mcp-Param-Region header is required because arguments.region is set',
      ),
    });

    const differs = await call({ 'Mcp-Param-Region': 'us-east1' });
    expect(differs.status).toBe(400);
    expect(differs.response.error).toMatchObject({
      code: -32020,
      message: expect.stringContaining(
        'Mcp-Param-Region header "us-east1" differs from arguments.region "eu-west1"',
      ),
      data: { mismatch: { header: 'us-east1', body: 'eu-west1' } },
    });

    // Header names are case-insensitive; an encoded value is decoded before the comparison.
    const encoded = await call({ 'mcp-param-region': '=?base64?ZXUtd2VzdDE=?=' });
    expect(encoded.status).toBe(200);
    expect(encoded.response.result.content).toEqual([
      { type: 'text', text: 'hi from eu-west1 (Mcp-Param-Region: eu-west1)' },
    ]);
  }, 30_000);
});
