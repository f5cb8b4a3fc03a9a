/*
 * MCP servers in the catalog (contract mcp-access §2) on the real development backend: the real
 * catalog with catalog-backend-module-mcp-broker, the broker, and a real example MCP server. The
 * broker's server list lives in a file the app-config pulls in with `$include` (Backstage
 * watches it), so adding and removing a server is a config reload. The module's scheduled full
 * sync is pushed an hour away: every change seen here travelled as an `mcp-broker` event (the
 * delta path), re-read over the broker's REST.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { apiEntityOfMcpServer } from '../testing/catalogEntities';
import { STATIC_SERVICE_TOKEN } from '../testing/portalHttp';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';

/** Generous: the contract says 5 s; this only bounds how long a broken build hangs. */
const ENTITY_TIMEOUT_MS = 30_000;
const TEAM = 'group:default/payments-team';

describe('MCP servers as catalog API entities (real backend, catalog, broker and example server)', () => {
  let example: ExampleMcpServer;
  let backend: BackendProcess;
  let dir: string;
  let serversFile: string;

  const writeServers = (servers: Array<Record<string, unknown>>) => {
    // Write then rename: the watcher sees one complete file.
    const temporary = `${serversFile}.tmp`;
    fs.writeFileSync(temporary, JSON.stringify({ servers }));
    fs.renameSync(temporary, serversFile);
  };
  const entityOf = (name: string) => apiEntityOfMcpServer(backend, STATIC_SERVICE_TOKEN, name);

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-catalog-'));
    serversFile = path.join(dir, 'mcp-broker.json');
    writeServers([]);
    backend = await startBackendProcess({
      config: {
        mcpBroker: { $include: serversFile },
        catalog: {
          providers: {
            mcpBroker: {
              schedule: {
                frequency: { hours: 1 },
                timeout: { minutes: 1 },
                initialDelay: { hours: 1 },
              },
            },
          },
        },
      },
    });
  }, 120_000);

  afterAll(async () => {
    await backend?.stop();
    await example?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it('a server added to the config appears as an API entity with its owner and tools', async () => {
    writeServers([
      {
        name: 'catalogued',
        url: example.url,
        owner: 'payments-team',
        headers: { 'X-Api-Key': 'never-in-the-catalog' },
      },
    ]);
    const entity = (await waitFor(
      async () => {
        const found = await entityOf('catalogued');
        // The first event may precede the first listing: wait for the one with the tools.
        return found?.spec?.definition?.includes('catalogued_echo') ? found : undefined;
      },
      ENTITY_TIMEOUT_MS,
      'the entity of server catalogued with its tools',
    ))!;
    expect(entity).toMatchObject({
      kind: 'API',
      metadata: {
        name: 'mcp-server-catalogued',
        annotations: {
          'mcp.devportal.io/server': 'catalogued',
          'mcp.devportal.io/source': 'config',
        },
      },
      spec: { type: 'mcp-server', lifecycle: 'production', owner: TEAM },
    });
    expect(entity.metadata.links?.map(link => link.url)).toEqual([
      'http://localhost:3000/mcp?server=catalogued',
      expect.stringMatching(/^http:\/\/.+\/api\/mcp-broker\/mcp$/),
    ]);
    const definition = JSON.parse(entity.spec!.definition!);
    expect(definition).toMatchObject({ server: 'catalogued', kind: 'server' });
    expect(definition.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'echo', brokerName: 'catalogued_echo' }),
      ]),
    );
    const text = JSON.stringify(entity);
    expect(text).not.toContain('never-in-the-catalog');
    expect(text).not.toContain(example.url);
  }, 60_000);

  it('a server removed from the config disappears from the catalog', async () => {
    await waitFor(() => entityOf('catalogued'), ENTITY_TIMEOUT_MS, 'the entity to exist first');
    writeServers([]);
    await waitFor(
      async () => (await entityOf('catalogued')) === undefined,
      ENTITY_TIMEOUT_MS,
      'the entity of server catalogued to be gone',
    );
  }, 60_000);
});
