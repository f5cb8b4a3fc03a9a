/*
 * MCPVirtualServer → curated endpoint, and the namespace trust boundary
 * (docs/contracts/curated-endpoints.md §9), on plain objects: no cluster is needed to decide.
 */
import type { BrokerServerConfig } from '../config';
import type { KubeObjectLike } from './registrationTypes';
import {
  endpointOfVirtualServer,
  VIRTUAL_SERVER_TITLE_ANNOTATION,
  VirtualServerError,
} from './virtualServerMapping';

const registered = (namespace: string, name: string, toolPrefix: string): BrokerServerConfig =>
  ({
    name: `${namespace}-${name}`,
    url: `http://${name}.${namespace}/mcp`,
    toolPrefix,
    headers: {},
    source: { type: 'kubernetes', namespace, name },
  }) as BrokerServerConfig;
const configured = (name: string, toolPrefix: string): BrokerServerConfig =>
  ({ name, url: `http://${name}/mcp`, toolPrefix, headers: {} }) as BrokerServerConfig;

const SERVERS = [
  registered('team-a', 'weather', 'weather_'),
  registered('team-a', 'maps', 'maps_'),
  registered('team-b', 'search', 'search_'),
  configured('jira', 'jira_'),
  // An empty prefix matches every name, as the shortest: it takes nothing from longer prefixes.
  configured('everything', ''),
];

const virtualServer = (
  spec: object,
  metadata: KubeObjectLike['metadata'] = {},
): KubeObjectLike => ({
  metadata: { namespace: 'team-a', name: 'Triage.v1', ...metadata },
  spec,
});

function refusal(object: KubeObjectLike, servers = SERVERS): VirtualServerError {
  try {
    endpointOfVirtualServer(object, servers);
  } catch (error) {
    if (error instanceof VirtualServerError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('endpointOfVirtualServer', () => {
  it('maps name, exact tools, description, title and the servers the tools belong to', () => {
    const endpoint = endpointOfVirtualServer(
      virtualServer(
        {
          tools: ['weather_forecast', 'maps_route', 'weather_forecast'],
          description: 'Plan a trip.',
        },
        { annotations: { [VIRTUAL_SERVER_TITLE_ANNOTATION]: 'Trip planning' } },
      ),
      SERVERS,
    );
    expect(endpoint).toMatchObject({
      name: 'team-a-triage-v1',
      title: 'Trip planning',
      instructions: 'Plan a trip.',
      servers: ['team-a-maps', 'team-a-weather'],
      includeNames: ['weather_forecast', 'maps_route'],
      exclude: [],
    });
    expect(endpoint.include).toBeUndefined();
  });

  it('titles the endpoint with its name without the annotation, and has no instructions without a description', () => {
    const endpoint = endpointOfVirtualServer(virtualServer({ tools: ['maps_route'] }), SERVERS);
    expect(endpoint.title).toBe('team-a-triage-v1');
    expect(endpoint.instructions).toBeUndefined();
  });

  it("refuses a tool of another namespace's registration (ToolOutsideNamespace), naming it and what to do", () => {
    const error = refusal(virtualServer({ tools: ['weather_forecast', 'search_query'] }));
    expect(error.reason).toBe('ToolOutsideNamespace');
    expect(error.message).toContain('"search_query"');
    expect(error.message).toContain('team-b-search');
    expect(error.message).toMatch(/register its server here/);
  });

  it('refuses a tool of a config server as outside the namespace too', () => {
    const error = refusal(virtualServer({ tools: ['jira_search'] }));
    expect(error.reason).toBe('ToolOutsideNamespace');
    expect(error.message).toContain('"jira"');
  });

  it('refuses a tool no prefix matches (UnknownTool) until its server appears', () => {
    const servers = SERVERS.filter(s => s.toolPrefix !== '');
    expect(refusal(virtualServer({ tools: ['notes_add'] }), servers).reason).toBe('UnknownTool');
    const later = [...servers, registered('team-a', 'notes', 'notes_')];
    expect(endpointOfVirtualServer(virtualServer({ tools: ['notes_add'] }), later).servers).toEqual(
      ['team-a-notes'],
    );
  });

  it('gives a tool to the longest matching prefix, and refuses a tie with a foreign server', () => {
    const servers = [...SERVERS, registered('team-a', 'weather-pro', 'weather_pro_')];
    expect(
      endpointOfVirtualServer(virtualServer({ tools: ['weather_pro_alerts'] }), servers).servers,
    ).toEqual(['team-a-weather-pro']);
    const tie = [...SERVERS, configured('weather-copy', 'weather_')];
    expect(refusal(virtualServer({ tools: ['weather_forecast'] }), tie).reason).toBe(
      'ToolOutsideNamespace',
    );
  });

  it.each([
    ['no tools', {}, /spec.tools must list at least one tool/],
    ['an empty tool list', { tools: [] }, /spec.tools must list at least one tool/],
    [
      'a tool that is no name',
      { tools: ['weather_x', 7] },
      /spec.tools must list at least one tool/,
    ],
    [
      'a description over 4,000 characters',
      { tools: ['weather_x'], description: 'x'.repeat(4001) },
      /longer than 4000 characters/,
    ],
    ['spec.prompts', { tools: ['weather_x'], prompts: ['p'] }, /spec.prompts is not supported/],
    [
      'spec.resources',
      { tools: ['weather_x'], resources: ['file:///a'] },
      /spec.resources is not supported/,
    ],
  ])('refuses %s (Invalid)', (_label, spec, message) => {
    const error = refusal(virtualServer(spec));
    expect(error.reason).toBe('Invalid');
    expect(error.message).toMatch(message);
  });

  it('refuses a name longer than 63 characters instead of cutting it (no two resources share one)', () => {
    const error = refusal(virtualServer({ tools: ['weather_x'] }, { name: 'n'.repeat(60) }));
    expect(error.reason).toBe('Invalid');
    expect(error.message).toMatch(/longer than 63 characters/);
  });
});
