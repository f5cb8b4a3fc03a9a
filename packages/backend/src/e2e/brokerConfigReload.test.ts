/*
 * Config reload in the real backend process: the broker's server list lives in a file that the
 * test's app-config pulls in with `$include`; Backstage's file config source watches every file
 * given with --config and the files they include, so editing it changes the running broker
 * without a restart. Backends are real example MCP servers; the client is the official SDK client.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, passMarker, waitFor } from './brokerTestKit';

describe('MCP broker servers added and removed by editing a config file (real backend process)', () => {
  let a: ExampleMcpServer;
  let b: ExampleMcpServer;
  let backend: BackendProcess;
  let client: BrokerClient;
  let dir: string;
  let serversFile: string;

  const writeServers = (servers: Array<{ name: string; url: string }>) => {
    // Write then rename, as editors and ConfigMap updates do: the watcher sees one complete file.
    const temporary = `${serversFile}.tmp`;
    // No coalescing window: no notification is held back behind the marker (passMarker).
    fs.writeFileSync(temporary, JSON.stringify({ servers, coalesceWindow: { milliseconds: 0 } }));
    fs.renameSync(temporary, serversFile);
  };
  const toolNames = async () => (await client.client.listTools()).tools.map(t => t.name);
  const listChangedCount = () =>
    client.notifications.filter(m => m === 'notifications/tools/list_changed').length;
  /** b takes part in both tests: its prompts/list_changed is the marker. */
  const announceFromB = async () => {
    await waitFor(() => b.openEventStreams() === 1, 10_000, 'the broker’s event stream to b');
    b.announcePromptsChanged();
  };

  beforeAll(async () => {
    a = await startExampleMcpServer({ port: 0 });
    b = await startExampleMcpServer({ port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'broker-reload-'));
    serversFile = path.join(dir, 'mcp-broker.json');
    writeServers([{ name: 'a', url: a.url }]);
    backend = await startBackendProcess({ config: { mcpBroker: { $include: serversFile } } });
    client = await connectBrokerClient(backend.baseUrl, await backend.signIn('alice'));
    await waitFor(async () => (await toolNames()).includes('a_echo'), 20_000, 'a’s tools');
    await client.eventStreamOpen; // the SDK opens it after connect() resolves
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await backend?.stop();
    await Promise.all([a?.close(), b?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('an added server’s tools appear and the client gets one tools/list_changed', async () => {
    const before = listChangedCount();
    writeServers([
      { name: 'a', url: a.url },
      { name: 'b', url: b.url },
    ]);
    await waitFor(async () => (await toolNames()).includes('b_echo'), 20_000, 'b’s tools');
    await waitFor(() => listChangedCount() > before, 5_000, 'tools/list_changed');
    await passMarker([client], announceFromB);
    expect(listChangedCount()).toBe(before + 1);
    expect(b.sessionCount()).toBe(1);
  }, 30_000);

  it('a removed server’s tools go and its connection is closed', async () => {
    const before = listChangedCount();
    writeServers([{ name: 'b', url: b.url }]);
    await waitFor(async () => !(await toolNames()).includes('a_echo'), 20_000, 'a’s tools to go');
    await waitFor(() => a.sessionCount() === 0, 5_000, 'a’s session to close');
    await passMarker([client], announceFromB);
    expect(listChangedCount()).toBe(before + 1);
    expect(await toolNames()).toContain('b_echo');
  }, 30_000);
});
