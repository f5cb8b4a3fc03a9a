/*
 * The mapping of broker servers onto API entities, checked against the catalog's own
 * validators (catalog-model), so a name the catalog would reject fails here.
 */
import { KubernetesValidatorFunctions, apiEntityV1alpha1Validator } from '@backstage/catalog-model';
import type { McpServerDescription } from '@devportal/plugin-mcp-broker-common';
import {
  MAX_DEFINITION_BYTES,
  mcpEntityName,
  serverDefinition,
  serverToEntity,
  type ServerEntityOptions,
} from './serverEntity';

const options: ServerEntityOptions = {
  toolsPageUrlTemplate: 'http://localhost:3000/mcp?server={name}',
  mcpEndpointUrl: 'http://localhost:7007/api/mcp-broker/mcp',
  defaultOwner: 'group:default/mcp-admins',
  location: 'mcp-broker:http://localhost:7007/api/mcp-broker',
};

const description = (patch: Partial<McpServerDescription> = {}): McpServerDescription => ({
  server: 'example',
  kind: 'server',
  toolPrefix: 'example_',
  owner: 'group:default/payments-team',
  source: { type: 'config' },
  state: 'connected',
  tools: [
    {
      name: 'deploy',
      brokerName: 'example_deploy',
      description: 'Deploys',
      annotations: { destructiveHint: true },
      inputSchema: { type: 'object', properties: { env: { type: 'string' } } },
    },
  ],
  prompts: [{ name: 'greeting', brokerName: 'example_greeting' }],
  resources: [{ uri: 'docs://readme', name: 'readme' }],
  resourceTemplates: [],
  ...patch,
});

describe('mcpEntityName', () => {
  it('names servers and endpoints mcp-<kind>-<name>', () => {
    expect(mcpEntityName({ kind: 'server', name: 'example' })).toBe('mcp-server-example');
    expect(mcpEntityName({ kind: 'endpoint', name: 'ops' })).toBe('mcp-endpoint-ops');
  });

  it('hashes names over 63 characters, unique per server and within the limit', () => {
    const long = 'a'.repeat(60);
    const name = mcpEntityName({ kind: 'server', name: long });
    expect(name).toHaveLength(63);
    expect(KubernetesValidatorFunctions.isValidObjectName(name)).toBe(true);
    expect(name).toMatch(/^mcp-server-a+-[0-9a-f]{10}$/);
    expect(mcpEntityName({ kind: 'server', name: `${long}b` })).not.toBe(name);
    expect(mcpEntityName({ kind: 'endpoint', name: long })).not.toBe(name);
    // A cut that ends in "-" loses it before the hash.
    const dashed = mcpEntityName({ kind: 'server', name: `${'b'.repeat(40)}-${'c'.repeat(30)}` });
    expect(dashed).not.toMatch(/--/);
  });
});

describe('serverToEntity', () => {
  it('builds an API entity of type mcp-server with owner, links, annotations and definition', async () => {
    const entity = serverToEntity(description(), options);
    expect(await apiEntityV1alpha1Validator.check(entity)).toBe(true);
    expect(entity).toMatchObject({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'API',
      metadata: {
        namespace: 'default',
        name: 'mcp-server-example',
        title: 'example',
        description: 'MCP server example behind the MCP broker',
        tags: ['mcp'],
        links: [
          { url: 'http://localhost:3000/mcp?server=example', type: 'mcp-tools' },
          { url: 'http://localhost:7007/api/mcp-broker/mcp', type: 'mcp-endpoint' },
        ],
        annotations: {
          'mcp.devportal.io/server': 'example',
          'mcp.devportal.io/source': 'config',
          'backstage.io/managed-by-location': options.location,
          'backstage.io/managed-by-origin-location': options.location,
        },
      },
      spec: { type: 'mcp-server', lifecycle: 'production', owner: 'group:default/payments-team' },
    });
  });

  it('falls back to the default owner when the broker names none', () => {
    const entity = serverToEntity(description({ owner: undefined }), options);
    expect(entity.spec.owner).toBe('group:default/mcp-admins');
  });

  it('names a registration as its source and takes title and description from the broker', () => {
    const entity = serverToEntity(
      description({
        source: { type: 'kubernetes', namespace: 'team-a', name: 'jira' },
        title: 'Jira',
        description: 'x'.repeat(2000),
      }),
      options,
    );
    expect(entity.metadata.annotations!['mcp.devportal.io/source']).toBe('kubernetes:team-a/jira');
    expect(entity.metadata.title).toBe('Jira');
    expect(entity.metadata.description).toHaveLength(1000);
  });

  it('links an endpoint with ?endpoint= and annotates it as an endpoint', () => {
    const entity = serverToEntity(description({ kind: 'endpoint', server: 'ops' }), options);
    expect(entity.metadata.name).toBe('mcp-endpoint-ops');
    expect(entity.metadata.links![0].url).toBe('http://localhost:3000/mcp?endpoint=ops');
    expect(entity.metadata.annotations!['mcp.devportal.io/endpoint']).toBe('ops');
    expect(entity.metadata.annotations!['mcp.devportal.io/server']).toBeUndefined();
  });

  it('URL-encodes the name in the tools page link', () => {
    const entity = serverToEntity(description(), {
      ...options,
      toolsPageUrlTemplate: 'https://portal/x/{name}/tools',
    });
    expect(entity.metadata.links![0].url).toBe('https://portal/x/example/tools');
  });

  it('copies only named members: a URL or header smuggled into a description never reaches the entity', () => {
    const smuggled = {
      ...description(),
      url: 'http://internal.example:9000/mcp',
      headers: { Authorization: 'Bearer s3cret' },
    } as McpServerDescription;
    const text = JSON.stringify(serverToEntity(smuggled, options));
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain('internal.example');
  });
});

describe('serverDefinition', () => {
  it('is pretty-printed JSON with the tools, prompts and resources, keys in contract order', () => {
    const text = serverDefinition(description());
    expect(text).toContain('\n  "server": "example"');
    const parsed = JSON.parse(text);
    expect(Object.keys(parsed)).toEqual([
      'server',
      'kind',
      'toolPrefix',
      'tools',
      'prompts',
      'resources',
      'resourceTemplates',
    ]);
    expect(parsed.tools[0]).toMatchObject({ name: 'deploy', brokerName: 'example_deploy' });
    expect(parsed.tools[0].inputSchema.properties.env.type).toBe('string');
  });

  it('is never empty, even for a server that has listed nothing', () => {
    const parsed = JSON.parse(
      serverDefinition(description({ tools: [], prompts: [], resources: [] })),
    );
    expect(parsed).toMatchObject({ server: 'example', tools: [], prompts: [] });
  });

  const bigSchema = { type: 'object', description: 'y'.repeat(4000) };
  const tools = (count: number, withSchema: boolean) =>
    Array.from({ length: count }, (_, i) => ({
      name: `t${i}`,
      brokerName: `example_t${i}`,
      description: 'd'.repeat(200),
      ...(withSchema ? { inputSchema: bigSchema } : {}),
    }));

  it('leaves the schemas out when the document would exceed 256 KiB', () => {
    const text = serverDefinition(description({ tools: tools(100, true) }));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_DEFINITION_BYTES);
    const parsed = JSON.parse(text);
    expect(parsed.schemasOmitted).toBe(true);
    expect(parsed.truncated).toBeUndefined();
    expect(parsed.tools).toHaveLength(100);
    expect(parsed.tools[0].inputSchema).toBeUndefined();
  });

  it('cuts the lists when even the lean document is too large, and says so', () => {
    const text = serverDefinition(description({ tools: tools(2000, true) }));
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_DEFINITION_BYTES);
    const parsed = JSON.parse(text);
    expect(parsed).toMatchObject({ schemasOmitted: true, truncated: true });
    expect(parsed.tools.length).toBeGreaterThan(0);
    expect(parsed.tools.length).toBeLessThan(2000);
  });
});
