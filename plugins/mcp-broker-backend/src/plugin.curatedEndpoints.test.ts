/*
 * Curated endpoints (spec §13, docs/contracts/curated-endpoints.md §3 and §5) in a test backend
 * (startTestBackend, mocked auth) in front of the repository's example MCP server (a real SDK
 * server: tools, one of which elicits, a prompt, a resource) and the scripted server as a
 * tools-only backend; raw HTTP, so every status and body is seen. The auditor is a test double
 * that records the events. The development backend's e2e test (brokerCuratedEndpoints) drives
 * the same endpoints with the official SDK clients and RBAC.
 */
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { mcpBrokerPlugin } from './plugin';
import { recordingAuditor, type RecordedAuditEvent } from './__testUtils__/recordingAuditor';
import { withModernEnvelope } from './backend/ModernChannel';
import { ScriptedMcpServer, startScriptedMcpServer } from './testing/scriptedMcpServer';
import { waitFor } from './testing/waitFor';

const ALICE = mockCredentials.user.header('user:default/alice');

describe('curated endpoints: capabilities, audit and requestState (startTestBackend, the example MCP server, the scripted server as a tools-only backend, an auditor test double)', () => {
  let audit: RecordedAuditEvent[] = [];
  let example: ExampleMcpServer;
  let scripted: ScriptedMcpServer;
  let stop: () => Promise<void>;
  let base: string;

  beforeAll(async () => {
    [example, scripted] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      startScriptedMcpServer({ tools: ['lookup'] }),
    ]);
    const auditor = recordingAuditor();
    audit = auditor.events;
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        auditor.factory,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [
                { name: 'example', url: example.url },
                { name: 'scripted', url: scripted.url },
              ],
              endpoints: {
                lookups: { servers: ['scripted'] },
                // `?` is one character: example_echo, not example_count.
                asks: {
                  title: 'Asks',
                  instructions: 'Echo and confirm.',
                  servers: ['example'],
                  tools: { include: ['example_e?ho', '*_confirm'] },
                },
                // No tool of anyone's view: not listed for the portal's MCP page.
                empty: { servers: ['example'], tools: { include: ['nothing_*'] } },
              },
            },
          },
        }),
      ],
    });
    stop = async () => server.stop?.();
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker`;
    await waitFor(
      async () => (await toolNames(`${base}/mcp`)).length >= 6,
      'the broker to list both servers',
    );
  });

  afterAll(async () => {
    await stop?.();
    await Promise.all([example?.close(), scripted?.close()]);
  });

  /** POSTs a 2026-07-28 request (no session) to `url`. */
  async function modern(url: string, id: number, method: string, params: object, name?: string) {
    const answer = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: ALICE,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': method,
        ...(name === undefined ? {} : { 'Mcp-Name': name }),
      },
      body: JSON.stringify(
        withModernEnvelope(
          { jsonrpc: '2.0', id, method, params: { ...params } },
          {
            elicitation: {},
          },
        ),
      ),
    });
    return { status: answer.status, body: await answer.json() };
  }

  async function toolNames(url: string): Promise<string[]> {
    const { body } = await modern(url, 1, 'tools/list', {});
    return ((body.result?.tools ?? []) as Array<{ name: string }>).map(tool => tool.name).sort();
  }

  const callTool = (url: string, id: number, params: { name: string; [key: string]: unknown }) =>
    modern(url, id, 'tools/call', params, params.name);

  it('advertises the capabilities of its own servers only (initialize and server/discover)', async () => {
    const initialize = async (url: string) => {
      const answer = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: ALICE,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'endpoint-test', version: '1.0.0' },
          },
        }),
      });
      return (await answer.json()).result.capabilities;
    };
    const main = await initialize(`${base}/mcp`);
    expect(main).toMatchObject({
      prompts: { listChanged: true },
      resources: { listChanged: true },
    });
    const lookups = await initialize(`${base}/endpoints/lookups/mcp`);
    expect(lookups).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: false },
      resources: { listChanged: false },
    });
    const discovered = await modern(`${base}/endpoints/lookups/mcp`, 2, 'server/discover', {});
    expect(discovered.body.result.capabilities).toEqual(lookups);
    expect((await initialize(`${base}/endpoints/asks/mcp`)).prompts).toEqual({ listChanged: true });
  });

  it('lists on /catalog the endpoints through which the caller sees a tool', async () => {
    const answer = await fetch(`${base}/catalog`, { headers: { Authorization: ALICE } });
    expect(answer.status).toBe(200);
    expect((await answer.json()).endpoints).toEqual([
      { name: 'lookups', title: 'lookups', tools: 1 },
      { name: 'asks', title: 'Asks', instructions: 'Echo and confirm.', tools: 2 },
    ]);
  });

  it('matches `?` as one character in tool globs', async () => {
    expect(await toolNames(`${base}/endpoints/asks/mcp`)).toEqual([
      'example_confirm',
      'example_echo',
    ]);
  });

  it("audits calls with the endpoint, and a tool outside it as denied 'not-in-endpoint'", async () => {
    const through = await callTool(`${base}/endpoints/asks/mcp`, 3, {
      name: 'example_echo',
      arguments: { message: 'audited' },
    });
    expect(JSON.stringify(through.body.result.content)).toContain('audited');
    const outside = await callTool(`${base}/endpoints/asks/mcp`, 4, {
      name: 'example_count',
      arguments: {},
    });
    const unknown = await callTool(`${base}/endpoints/asks/mcp`, 5, {
      name: 'example_nothing',
      arguments: {},
    });
    // Outside the endpoint answers exactly as unknown.
    expect(outside.body.error.code).toBe(-32602);
    expect(outside.body.error.message.replace('example_count', 'X')).toBe(
      unknown.body.error.message.replace('example_nothing', 'X'),
    );
    await callTool(`${base}/mcp`, 6, { name: 'example_echo', arguments: { message: 'main' } });

    await waitFor(() => audit.filter(event => event.end).length >= 4, 'the four audit events');
    const echoes = audit.filter(event => event.meta.tool === 'echo');
    expect(echoes.map(event => event.meta.endpoint)).toEqual(['asks', undefined]);
    expect(echoes[0].end?.outcome).toBe('succeeded');
    expect(audit.find(event => event.meta.tool === 'count')).toMatchObject({
      meta: { principal: 'user:default/alice', server: 'example', endpoint: 'asks' },
      end: {
        outcome: 'denied',
        meta: { reason: 'not-in-endpoint' },
        error: expect.stringMatching(/^not-in-endpoint: /),
      },
    });
    expect(audit.find(event => event.meta.tool === 'example_nothing')).toMatchObject({
      meta: { server: null, endpoint: 'asks' },
      end: { outcome: 'failed', error: 'unknown tool' },
    });
  });

  it('refuses a requestState issued on one endpoint anywhere else, without using it up', async () => {
    const params = { name: 'example_confirm', arguments: { question: 'Ship it?' } };
    const first = await callTool(`${base}/endpoints/asks/mcp`, 7, params);
    expect(first.body.result).toMatchObject({
      resultType: 'input_required',
      requestState: expect.any(String),
    });
    const [key] = Object.keys(first.body.result.inputRequests);
    const retry = {
      ...params,
      requestState: first.body.result.requestState,
      inputResponses: { [key]: { action: 'accept', content: { confirmed: true } } },
    };
    const onMain = await callTool(`${base}/mcp`, 8, retry);
    expect(onMain.status).toBe(400);
    expect(onMain.body.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('issued on another MCP endpoint'),
      data: { reason: 'foreign-endpoint' },
    });
    const rightful = await callTool(`${base}/endpoints/asks/mcp`, 9, retry);
    expect(rightful.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { action: 'accept', content: { confirmed: true } },
    });
  });
});
