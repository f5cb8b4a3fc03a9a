import { AggregatedCatalog, uriTemplateMatcher } from './AggregatedCatalog';

const backend = (name: string, toolPrefix = `${name}_`) => ({
  name,
  url: `http://${name}/mcp`,
  toolPrefix,
  headers: {},
});
const lists = (
  over: Partial<
    Record<'tools' | 'prompts' | 'resources' | 'resourceTemplates', Record<string, unknown>[]>
  >,
) => ({
  tools: [],
  prompts: [],
  resources: [],
  resourceTemplates: [],
  ...over,
});

describe('AggregatedCatalog', () => {
  it('prefixes tool and prompt names and routes them back to the original names', () => {
    const catalog = AggregatedCatalog.build([
      {
        backend: backend('a'),
        lists: lists({ tools: [{ name: 'echo' }], prompts: [{ name: 'hello' }] }),
      },
      { backend: backend('b', ''), lists: lists({ tools: [{ name: 'echo' }] }) },
    ]);
    expect(catalog.tools.map(t => t.name)).toEqual(['a_echo', 'echo']);
    expect(catalog.routeTool('a_echo')).toEqual({ backend: 'a', originalName: 'echo' });
    expect(catalog.routeTool('echo')).toEqual({ backend: 'b', originalName: 'echo' });
    expect(catalog.routePrompt('a_hello')).toEqual({ backend: 'a', originalName: 'hello' });
    expect(catalog.routeTool('b_echo')).toBeUndefined();
    expect(catalog.clashes).toEqual([]);
  });

  it('gives a clashing name to the first backend in config order and reports the clash', () => {
    const catalog = AggregatedCatalog.build([
      {
        backend: backend('a', ''),
        lists: lists({
          tools: [{ name: 'echo', description: 'from a' }],
          resources: [{ uri: 'x://1' }],
        }),
      },
      {
        backend: backend('b', ''),
        lists: lists({
          tools: [{ name: 'echo', description: 'from b' }],
          resources: [{ uri: 'x://1' }],
        }),
      },
    ]);
    expect(catalog.tools).toEqual([{ name: 'echo', description: 'from a' }]);
    expect(catalog.routeResource('x://1')).toBe('a');
    expect(catalog.clashes).toEqual([
      { kind: 'tool', name: 'echo', owner: 'a', hidden: 'b' },
      { kind: 'resource', name: 'x://1', owner: 'a', hidden: 'b' },
    ]);
  });

  it('routes resources by listed URI, then by template, and refuses unknown URIs when ambiguous', () => {
    const catalog = AggregatedCatalog.build([
      { backend: backend('a'), lists: lists({ resources: [{ uri: 'a://readme' }] }) },
      {
        backend: backend('b'),
        lists: lists({ resourceTemplates: [{ uriTemplate: 'demo://resource/{id}' }] }),
      },
    ]);
    expect(catalog.routeResource('a://readme')).toBe('a');
    expect(catalog.routeResource('demo://resource/42')).toBe('b');
    expect(catalog.routeResource('other://x')).toBeUndefined();
  });

  it('matches RFC 6570 templates loosely', () => {
    expect(uriTemplateMatcher('file:///{+path}').test('file:///a/b/c.txt')).toBe(true);
    expect(uriTemplateMatcher('demo://r/{id}').test('demo://r/1/2')).toBe(false);
    expect(uriTemplateMatcher('search://q{?term,limit}').test('search://q?term=x&limit=2')).toBe(
      true,
    );
    expect(uriTemplateMatcher('a.b://{x}').test('aXb://1')).toBe(false);
  });

  it('fingerprints views so unchanged lists compare equal', () => {
    const build = () =>
      AggregatedCatalog.build([
        { backend: backend('a'), lists: lists({ tools: [{ name: 't' }] }) },
      ]);
    expect(build().fingerprint('tools')).toBe(build().fingerprint('tools'));
    expect(build().fingerprint('tools')).not.toBe(AggregatedCatalog.empty().fingerprint('tools'));
  });

  it('leaves out tools with invalid x-mcp-header annotations, keeps the others’', () => {
    const region = { type: 'string', 'x-mcp-header': 'Region' };
    const catalog = AggregatedCatalog.build([
      {
        backend: backend('a', ''),
        lists: lists({
          tools: [
            { name: 'sql', inputSchema: { type: 'object', properties: { region } } },
            {
              name: 'echo',
              inputSchema: { type: 'object', properties: { l: { type: 'array', items: region } } },
            },
            { name: 'plain', inputSchema: { type: 'object' } },
          ],
        }),
      },
      // An invalid definition owns no name: the next backend's valid `echo` is served.
      { backend: backend('b', ''), lists: lists({ tools: [{ name: 'echo' }] }) },
    ]);
    expect(catalog.tools.map(t => t.name)).toEqual(['sql', 'plain', 'echo']);
    expect(catalog.routeTool('echo')).toEqual({ backend: 'b', originalName: 'echo' });
    expect(catalog.rejectedTools).toEqual([
      { backend: 'a', tool: 'echo', reason: expect.stringMatching(/not reachable/) },
    ]);
    expect(catalog.clashes).toEqual([]);
    const declarations = [
      { name: 'Region', header: 'mcp-param-region', path: ['region'], type: 'string' },
    ];
    expect(catalog.routeTool('sql')).toEqual({
      backend: 'a',
      originalName: 'sql',
      paramHeaders: declarations,
    });
    expect(catalog.paramHeadersOf('a', 'sql')).toEqual(declarations);
    expect(catalog.paramHeadersOf('a', 'plain')).toEqual([]);
    expect(catalog.paramHeadersOf('b', 'sql')).toEqual([]);
  });
});

describe('AggregatedCatalog with MCP Apps UI resources', () => {
  const uiUri = 'ui://get-time/mcp-app.html';
  const appLists = (html: string) =>
    lists({
      tools: [{ name: 'get-time', _meta: { ui: { resourceUri: uiUri }, 'ui/resourceUri': uiUri } }],
      resources: [{ uri: uiUri, name: html, mimeType: 'text/html;profile=mcp-app' }],
      resourceTemplates: [{ uriTemplate: 'ui://views/{id}', name: 'view' }],
    });
  const catalog = AggregatedCatalog.build([
    { backend: backend('vanilla'), lists: appLists('vanilla') },
    { backend: backend('react', ''), lists: appLists('react') },
    { backend: backend('files'), lists: lists({ resources: [{ uri: 'file:///a' }] }) },
  ]);

  it('shows each server’s UI URIs under its own name, so equal URIs do not clash', () => {
    expect(catalog.resources.map(r => r.uri)).toEqual([
      'ui://vanilla/get-time/mcp-app.html',
      'ui://react/get-time/mcp-app.html',
      'file:///a',
    ]);
    expect(catalog.resourceTemplates.map(t => t.uriTemplate)).toEqual([
      'ui://vanilla/views/{id}',
      'ui://react/views/{id}',
    ]);
    expect(catalog.tools.map(t => t._meta)).toEqual([
      {
        ui: { resourceUri: 'ui://vanilla/get-time/mcp-app.html' },
        'ui/resourceUri': 'ui://vanilla/get-time/mcp-app.html',
      },
      {
        ui: { resourceUri: 'ui://react/get-time/mcp-app.html' },
        'ui/resourceUri': 'ui://react/get-time/mcp-app.html',
      },
    ]);
    expect(catalog.clashes).toEqual([]);
  });

  it('routes a broker UI URI to its server under the server’s own URI', () => {
    expect(catalog.resolveResource('ui://react/get-time/mcp-app.html')).toEqual({
      backend: 'react',
      name: uiUri,
      uri: uiUri,
    });
    // Unlisted UI resources are read too (servers may leave them out of their lists).
    expect(catalog.resolveResource('ui://vanilla/other.html')).toEqual({
      backend: 'vanilla',
      name: 'ui://other.html',
      uri: 'ui://other.html',
    });
    // A template's match is decided on the backend's own template.
    expect(catalog.resolveResource('ui://vanilla/views/7')).toEqual({
      backend: 'vanilla',
      name: 'ui://views/{id}',
      uri: 'ui://views/7',
    });
    expect(catalog.templateRoute('ui://react/views/{id}')).toEqual({
      backend: 'react',
      name: 'ui://views/{id}',
    });
    expect(catalog.resolveResource('file:///a')).toEqual({
      backend: 'files',
      name: 'file:///a',
      uri: 'file:///a',
    });
  });

  it('routes no UI URI that names no server', () => {
    expect(catalog.routeResource(uiUri)).toBeUndefined();
    expect(catalog.routeResource('ui://files2/get-time/mcp-app.html')).toBeUndefined();
  });
});
