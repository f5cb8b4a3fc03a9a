import { AuthorizeResult, PolicyDecision } from '@backstage/plugin-permission-common';
import { AggregatedCatalog } from '../broker/AggregatedCatalog';
import { PermittedCatalog } from './PermittedCatalog';

const backend = (name: string) => ({
  name,
  url: `http://${name}/mcp`,
  toolPrefix: `${name}_`,
  headers: {},
});

const catalog = AggregatedCatalog.build([
  {
    backend: backend('docs'),
    lists: {
      tools: [{ name: 'search', annotations: { readOnlyHint: true } }, { name: 'delete_page' }],
      prompts: [{ name: 'summarise' }],
      resources: [{ uri: 'docs://index' }, { uri: 'docs://secret' }],
      resourceTemplates: [{ uriTemplate: 'docs://pages/{id}' }],
    },
  },
  {
    backend: backend('db'),
    lists: {
      tools: [{ name: 'query', annotations: { readOnlyHint: true } }],
      prompts: [],
      resources: [],
      resourceTemplates: [],
    },
  },
]);

const allow: PolicyDecision = { result: AuthorizeResult.ALLOW };
const deny: PolicyDecision = { result: AuthorizeResult.DENY };
const conditional = (resourceType: string, conditions: any): PolicyDecision => ({
  result: AuthorizeResult.CONDITIONAL,
  pluginId: 'mcp-broker',
  resourceType,
  conditions,
});

describe('PermittedCatalog', () => {
  it('keeps everything on ALLOW and hides everything on DENY, as if it did not exist', () => {
    const all = PermittedCatalog.of(catalog, { tool: allow, prompt: allow, resource: allow });
    expect(all.tools).toBe(catalog.tools);
    expect(all.routeTool('docs_delete_page')).toEqual({
      backend: 'docs',
      originalName: 'delete_page',
    });
    const none = PermittedCatalog.of(catalog, { tool: deny, prompt: deny, resource: deny });
    expect([none.tools, none.prompts, none.resources, none.resourceTemplates]).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect(none.routeTool('docs_search')).toBeUndefined();
    expect(none.routePrompt('docs_summarise')).toBeUndefined();
    expect(none.routeResource('docs://index')).toBeUndefined();
  });

  it('applies conditions per item: read-only tools, or any tool of one server', () => {
    const permitted = PermittedCatalog.of(catalog, {
      tool: conditional('mcp-broker-tool', {
        anyOf: [
          {
            rule: 'HAS_TOOL_ANNOTATION',
            resourceType: 'mcp-broker-tool',
            params: { annotation: 'readOnlyHint', value: true },
          },
          { rule: 'IS_ON_SERVER', resourceType: 'mcp-broker-tool', params: { servers: ['db'] } },
        ],
      }),
      prompt: allow,
      resource: allow,
    });
    expect(permitted.tools.map(t => t.name)).toEqual(['docs_search', 'db_query']);
    expect(permitted.routeTool('docs_delete_page')).toBeUndefined();
    expect(permitted.routeTool('db_query')).toEqual({ backend: 'db', originalName: 'query' });
  });

  it('decides a tool no longer listed (a task’s) on the entry it had, with the same conditions', () => {
    const readOnly = PermittedCatalog.of(catalog, {
      tool: conditional('mcp-broker-tool', {
        rule: 'HAS_TOOL_ANNOTATION',
        resourceType: 'mcp-broker-tool',
        params: { annotation: 'readOnlyHint', value: true },
      }),
      prompt: allow,
      resource: allow,
    });
    const gone = { server: 'docs', name: 'export' };
    expect(
      readOnly.mayUseUnlistedTool('docs_export', { ...gone, annotations: { readOnlyHint: true } }),
    ).toBe(true);
    expect(readOnly.mayUseUnlistedTool('docs_export', gone)).toBe(false);
    const everything = PermittedCatalog.of(catalog, {
      tool: allow,
      prompt: allow,
      resource: allow,
    });
    expect(everything.mayUseUnlistedTool('docs_export', gone)).toBe(true);
    const nothing = PermittedCatalog.of(catalog, { tool: deny, prompt: allow, resource: allow });
    expect(nothing.mayUseUnlistedTool('docs_export', gone)).toBe(false);
    // A narrowed view (a curated endpoint) decides it on its servers and its selection too.
    const onlyDb = everything.narrowed({
      servers: new Set(['db']),
      admitsTool: () => true,
      presentTool: tool => tool,
    });
    expect(onlyDb.mayUseUnlistedTool('docs_export', gone)).toBe(false);
    const noExports = everything.narrowed({
      servers: new Set(['docs', 'db']),
      admitsTool: (_route, tool) => tool.name !== 'docs_export',
      presentTool: tool => tool,
    });
    expect(noExports.mayUseUnlistedTool('docs_export', gone)).toBe(false);
    expect(noExports.mayUseUnlistedTool('docs_archive', { ...gone, name: 'archive' })).toBe(true);
  });

  it('decides resources on the listed URI, and unlisted URIs on the template that covers them', () => {
    const permitted = PermittedCatalog.of(catalog, {
      tool: allow,
      prompt: allow,
      resource: conditional('mcp-broker-resource', {
        rule: 'HAS_NAME',
        resourceType: 'mcp-broker-resource',
        params: { patterns: ['docs://index', 'docs://pages/*'] },
      }),
    });
    expect(permitted.resources).toEqual([{ uri: 'docs://index' }]);
    expect(permitted.resourceTemplates).toEqual([{ uriTemplate: 'docs://pages/{id}' }]);
    expect(permitted.routeResource('docs://index')).toBe('docs');
    expect(permitted.routeResource('docs://secret')).toBeUndefined();
    // Read through the template: decided on `docs:docs://pages/{id}`, which the pattern covers.
    expect(permitted.routeResource('docs://pages/42')).toBe('docs');
  });

  describe('with MCP Apps UI resources', () => {
    const uiUri = 'ui://get-time/mcp-app.html';
    const appLists = {
      tools: [
        { name: 'get-time', _meta: { ui: { resourceUri: uiUri, visibility: ['model', 'app'] } } },
        { name: 'refresh', _meta: { ui: { resourceUri: uiUri, visibility: ['app'] } } },
      ],
      prompts: [],
      resources: [{ uri: uiUri }],
      resourceTemplates: [],
    };
    const apps = AggregatedCatalog.build([
      { backend: backend('vanilla'), lists: appLists },
      { backend: backend('react'), lists: appLists },
    ]);
    // A policy denying `ui://*` on react: the pattern matches the backend's own URI.
    const notReactUi = PermittedCatalog.of(apps, {
      tool: allow,
      prompt: allow,
      resource: conditional('mcp-broker-resource', {
        not: {
          allOf: [
            {
              rule: 'IS_ON_SERVER',
              resourceType: 'mcp-broker-resource',
              params: { servers: ['react'] },
            },
            {
              rule: 'HAS_NAME',
              resourceType: 'mcp-broker-resource',
              params: { patterns: ['ui://*'] },
            },
          ],
        },
      }),
    });

    it('decides UI resources on the backend’s own URI, not the broker’s', () => {
      expect(notReactUi.resources).toEqual([{ uri: 'ui://vanilla/get-time/mcp-app.html' }]);
      expect(notReactUi.routeResource('ui://vanilla/get-time/mcp-app.html')).toBe('vanilla');
      expect(notReactUi.routeResource('ui://react/get-time/mcp-app.html')).toBeUndefined();
      // Unlisted UI resources of react are denied too, before anything is routed.
      expect(notReactUi.routeResource('ui://react/other.html')).toBeUndefined();
    });

    it('lists a tool whose UI the person may not read without its UI linkage', () => {
      expect(notReactUi.tools.map(t => [t.name, t._meta])).toEqual([
        [
          'vanilla_get-time',
          {
            ui: { resourceUri: 'ui://vanilla/get-time/mcp-app.html', visibility: ['model', 'app'] },
          },
        ],
        [
          'vanilla_refresh',
          { ui: { resourceUri: 'ui://vanilla/get-time/mcp-app.html', visibility: ['app'] } },
        ],
        ['react_get-time', { ui: { visibility: ['model', 'app'] } }],
        ['react_refresh', { ui: { visibility: ['app'] } }],
      ]);
      const all = PermittedCatalog.of(apps, { tool: allow, prompt: allow, resource: allow });
      expect(all.tools).toBe(apps.tools);
    });

    it('shows app-only tools to UI clients only', () => {
      const all = PermittedCatalog.of(apps, { tool: allow, prompt: allow, resource: allow });
      expect(all.visibleTools(true)).toBe(all.tools);
      expect(all.visibleTools(false).map(t => t.name)).toEqual([
        'vanilla_get-time',
        'react_get-time',
      ]);
      expect(all.routeTool('react_refresh')?.appOnly).toBe(true);
      expect(all.routeTool('react_get-time')?.appOnly).toBeUndefined();
    });
  });
});
