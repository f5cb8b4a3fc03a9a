import { AuthorizeResult, PolicyDecision } from '@backstage/plugin-permission-common';
import { AggregatedCatalog } from '../broker/AggregatedCatalog';
import { PermittedCatalog } from '../permissions/PermittedCatalog';
import {
  ambiguousAppResource,
  ambiguousAppTool,
  resolveAppResource,
  resolveAppTool,
  withoutAppOriginHint,
} from './appCallRoutes';

const backend = (name: string, toolPrefix = `${name}_`) => ({
  name,
  url: `http://${name}/mcp`,
  toolPrefix,
  headers: {},
});
const uiUri = 'ui://get-time/mcp-app.html';
const appLists = {
  tools: [
    { name: 'get-time', _meta: { ui: { resourceUri: uiUri } } },
    { name: 'refresh', _meta: { ui: { resourceUri: uiUri, visibility: ['app'] } } },
    { name: 'model-only', _meta: { ui: { visibility: ['model'] } } },
  ],
  prompts: [],
  resources: [{ uri: uiUri }],
  resourceTemplates: [],
};
const plainLists = {
  // A server without any UI is no app server, even with a tool of the same name.
  tools: [{ name: 'get-time' }, { name: 'refresh' }],
  prompts: [],
  resources: [],
  resourceTemplates: [],
};
const allow: PolicyDecision = { result: AuthorizeResult.ALLOW };
const permitted = (catalog: AggregatedCatalog, tool: PolicyDecision = allow) =>
  PermittedCatalog.of(catalog, { tool, prompt: allow, resource: allow });

const twoApps = AggregatedCatalog.build([
  { backend: backend('vanilla'), lists: appLists },
  { backend: backend('react'), lists: appLists },
  { backend: backend('plain'), lists: plainLists },
]);
const hint = (uri: string) => ({ _meta: { ui: { resourceUri: uri } } });

describe('resolveAppTool (an MCP App calling its server’s own tool, contract §3.6)', () => {
  it('routes by the origin hint to the server its broker UI URI names', () => {
    const catalog = permitted(twoApps);
    expect(resolveAppTool(catalog, 'get-time', hint('ui://react/get-time/mcp-app.html'))).toEqual({
      route: {
        backend: 'react',
        name: 'get-time',
        appCall: { resolution: 'hint', origin: 'react' },
      },
    });
  });

  it('refuses to guess between two app servers without a hint, naming the broker names', () => {
    const resolved = resolveAppTool(permitted(twoApps), 'get-time', {});
    expect(resolved).toEqual({
      candidates: ['react_get-time', 'vanilla_get-time'],
      servers: ['react', 'vanilla'],
    });
    expect(ambiguousAppTool('get-time', resolved as never)).toEqual({
      code: -32602,
      message:
        'Tool "get-time" is ambiguous: MCP servers "react" and "vanilla" both have it; call it by its broker name ("react_get-time" or "vanilla_get-time")',
      data: { reason: 'ambiguous-app-tool', candidates: ['react_get-time', 'vanilla_get-time'] },
    });
  });

  it('ignores a hint that names no server, and resolves by uniqueness', () => {
    const one = AggregatedCatalog.build([
      { backend: backend('vanilla'), lists: appLists },
      { backend: backend('plain'), lists: plainLists },
    ]);
    for (const params of [hint('ui://get-time/mcp-app.html'), hint('https://x'), {}]) {
      expect(resolveAppTool(permitted(one), 'refresh', params)).toEqual({
        route: { backend: 'vanilla', name: 'refresh', appCall: { resolution: 'unique' } },
      });
    }
  });

  it('never falls back from a hinted server to another one', () => {
    const one = AggregatedCatalog.build([
      { backend: backend('vanilla'), lists: appLists },
      { backend: backend('plain'), lists: plainLists },
    ]);
    expect(
      resolveAppTool(permitted(one), 'refresh', hint('ui://plain/anything.html')),
    ).toBeUndefined();
  });

  it('leaves out tools apps may not call, and tools the person may not use', () => {
    expect(resolveAppTool(permitted(twoApps), 'model-only', {})).toBeUndefined();
    const notReact = permitted(twoApps, {
      result: AuthorizeResult.CONDITIONAL,
      pluginId: 'mcp-broker',
      resourceType: 'mcp-broker-tool',
      conditions: {
        not: {
          rule: 'IS_ON_SERVER',
          resourceType: 'mcp-broker-tool',
          params: { servers: ['react'] },
        },
      },
    });
    expect(resolveAppTool(notReact, 'get-time', {})).toEqual({
      route: { backend: 'vanilla', name: 'get-time', appCall: { resolution: 'unique' } },
    });
    expect(
      resolveAppTool(notReact, 'get-time', hint('ui://react/get-time/mcp-app.html')),
    ).toBeUndefined();
  });
});

describe('resolveAppResource (an MCP App reading its server’s own UI URI, contract §3.6)', () => {
  it('routes by the hint, refuses to guess between two servers, and takes the only one', () => {
    const catalog = permitted(twoApps);
    expect(resolveAppResource(catalog, uiUri, hint('ui://vanilla/get-time/mcp-app.html'))).toEqual({
      route: {
        backend: 'vanilla',
        name: uiUri,
        appCall: { resolution: 'hint', origin: 'vanilla' },
      },
    });
    const resolved = resolveAppResource(catalog, uiUri, {});
    expect(ambiguousAppResource(uiUri, resolved as never)).toEqual({
      code: -32602,
      message:
        'Resource "ui://get-time/mcp-app.html" is ambiguous: MCP servers "react" and "vanilla" both have it; read it by its broker URI ("ui://react/get-time/mcp-app.html" or "ui://vanilla/get-time/mcp-app.html")',
      data: {
        reason: 'ambiguous-app-resource',
        candidates: ['ui://react/get-time/mcp-app.html', 'ui://vanilla/get-time/mcp-app.html'],
      },
    });
    const one = AggregatedCatalog.build([
      { backend: backend('vanilla'), lists: appLists },
      { backend: backend('plain'), lists: plainLists },
    ]);
    expect(resolveAppResource(permitted(one), uiUri, {})).toEqual({
      route: { backend: 'vanilla', name: uiUri, appCall: { resolution: 'unique' } },
    });
    expect(resolveAppResource(permitted(one), 'ui://nowhere/x.html', {})).toBeUndefined();
  });

  it('leaves out UI resources the person may not read', () => {
    const notReactUi = PermittedCatalog.of(twoApps, {
      tool: allow,
      prompt: allow,
      resource: {
        result: AuthorizeResult.CONDITIONAL,
        pluginId: 'mcp-broker',
        resourceType: 'mcp-broker-resource',
        conditions: {
          not: {
            rule: 'IS_ON_SERVER',
            resourceType: 'mcp-broker-resource',
            params: { servers: ['react'] },
          },
        },
      },
    });
    expect(resolveAppResource(notReactUi, uiUri, {})).toEqual({
      route: { backend: 'vanilla', name: uiUri, appCall: { resolution: 'unique' } },
    });
  });
});

describe('withoutAppOriginHint', () => {
  const isServer = (name: string) => name === 'vanilla';

  it('removes a hint holding a broker UI URI, and only that', () => {
    expect(
      withoutAppOriginHint(
        { name: 'x', _meta: { ui: { resourceUri: 'ui://vanilla/a.html' } } },
        isServer,
      ),
    ).toEqual({ name: 'x' });
    expect(
      withoutAppOriginHint(
        {
          name: 'x',
          _meta: { progressToken: 1, ui: { resourceUri: 'ui://vanilla/a.html', other: true } },
        },
        isServer,
      ),
    ).toEqual({ name: 'x', _meta: { progressToken: 1, ui: { other: true } } });
  });

  it('leaves params whose _meta holds no broker UI URI untouched', () => {
    const params = { name: 'x', _meta: { ui: { resourceUri: 'ui://a.html/b' } } };
    expect(withoutAppOriginHint(params, isServer)).toBe(params);
  });
});
