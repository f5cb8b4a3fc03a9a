import { AuthorizeResult, type PolicyDecision } from '@backstage/plugin-permission-common';
import { AggregatedCatalog } from '../broker/AggregatedCatalog';
import { PermittedCatalog } from '../permissions/PermittedCatalog';
import { CuratedEndpoint } from './CuratedEndpoint';
import type { CuratedEndpointConfig } from './endpointConfig';

const backend = (name: string) => ({
  name,
  url: `http://${name}/mcp`,
  toolPrefix: `${name}_`,
  headers: {},
});
const lists = (tools: Record<string, unknown>[], more: Record<string, unknown> = {}) => ({
  tools,
  prompts: [],
  resources: [],
  resourceTemplates: [],
  ...more,
});

const catalog = AggregatedCatalog.build([
  {
    backend: backend('jira'),
    lists: lists(
      [
        { name: 'search', description: 'Search', annotations: { readOnlyHint: true } },
        { name: 'get_issue', annotations: { readOnlyHint: true } },
        { name: 'delete_issue', annotations: { destructiveHint: true } },
      ],
      { prompts: [{ name: 'summary' }], resources: [{ uri: 'jira://board' }] },
    ),
  },
  {
    backend: backend('grafana'),
    lists: lists(
      [
        { name: 'dashboards', annotations: { readOnlyHint: true } },
        { name: 'admin_reset', annotations: { readOnlyHint: true } },
      ],
      { resources: [{ uri: 'grafana://home' }] },
    ),
  },
  { backend: backend('deploy'), lists: lists([{ name: 'run' }], { prompts: [{ name: 'p' }] }) },
]);

const ALLOW: PolicyDecision = { result: AuthorizeResult.ALLOW };
const DENY: PolicyDecision = { result: AuthorizeResult.DENY };
const everything = PermittedCatalog.of(catalog, { tool: ALLOW, prompt: ALLOW, resource: ALLOW });

const endpoint = (over: Partial<CuratedEndpointConfig> = {}) =>
  new CuratedEndpoint({
    name: 'triage',
    servers: ['jira', 'grafana'],
    exclude: [],
    annotations: {},
    overrides: new Map(),
    ...over,
  });
const names = (items: readonly Record<string, unknown>[]) => items.map(item => item.name);

describe('CuratedEndpoint', () => {
  it('shows only the tools, prompts and resources of its servers', () => {
    const view = everything.narrowed(endpoint());
    expect(names(view.tools)).toEqual([
      'jira_search',
      'jira_get_issue',
      'jira_delete_issue',
      'grafana_dashboards',
      'grafana_admin_reset',
    ]);
    expect(names(view.prompts)).toEqual(['jira_summary']);
    expect(view.resources.map(r => r.uri)).toEqual(['jira://board', 'grafana://home']);
    expect(view.routeTool('deploy_run')).toBeUndefined();
    expect(view.routePrompt('deploy_p')).toBeUndefined();
    expect(view.routeTool('jira_search')).toEqual({ backend: 'jira', originalName: 'search' });
    expect(view.routeResource('grafana://home')).toBe('grafana');
  });

  it('keeps tools matching an include glob and no exclude glob', () => {
    const view = everything.narrowed(
      endpoint({ include: ['jira_*', 'grafana_*'], exclude: ['*_admin_*', 'jira_delete*'] }),
    );
    expect(names(view.tools)).toEqual(['jira_search', 'jira_get_issue', 'grafana_dashboards']);
    expect(view.routeTool('grafana_admin_reset')).toBeUndefined();
    expect(view.routeTool('jira_delete_issue')).toBeUndefined();
  });

  it("filters on annotations, reading an undeclared hint as MCP's default", () => {
    const readOnly = everything.narrowed(endpoint({ annotations: { readOnlyHint: true } }));
    expect(names(readOnly.tools)).not.toContain('jira_delete_issue');
    expect(names(readOnly.tools)).toHaveLength(4);
    // destructiveHint defaults to true: only tools declaring false pass.
    const safe = everything.narrowed(endpoint({ annotations: { destructiveHint: false } }));
    expect(names(safe.tools)).toEqual([]);
  });

  it('presents overridden titles and descriptions without changing routes', () => {
    const view = everything.narrowed(
      endpoint({ overrides: new Map([['jira_search', { title: 'Search tickets' }]]) }),
    );
    expect(view.tools[0]).toEqual({
      name: 'jira_search',
      title: 'Search tickets',
      description: 'Search',
      annotations: { readOnlyHint: true },
    });
    expect(everything.tools[0]).not.toHaveProperty('title');
    expect(view.routeTool('jira_search')).toEqual({ backend: 'jira', originalName: 'search' });
  });

  it('narrows what the policy allows and never widens it', () => {
    const toolsDenied = PermittedCatalog.of(catalog, { tool: DENY, prompt: ALLOW, resource: DENY });
    const view = toolsDenied.narrowed(endpoint());
    expect(view.tools).toEqual([]);
    expect(view.routeTool('jira_search')).toBeUndefined();
    expect(view.resources).toEqual([]);
    expect(view.routeResource('jira://board')).toBeUndefined();
    expect(names(view.prompts)).toEqual(['jira_summary']);
  });

  it('narrows an access once per permitted view', () => {
    const curated = endpoint();
    const access = { mayCreateSession: true, mayReadStatus: false, catalog: everything };
    const narrowed = curated.narrowAccess(access);
    expect(curated.narrowAccess(access)).toBe(narrowed);
    expect(narrowed).toMatchObject({ mayCreateSession: true, mayReadStatus: false });
    expect(names(narrowed.catalog.tools)).not.toContain('deploy_run');
  });

  it('names itself and reports its status', () => {
    const curated = endpoint({
      title: 'Incident triage',
      servers: ['jira', 'missing'],
      overrides: new Map([
        ['jira_search', { title: 'S' }],
        ['deploy_run', { title: 'R' }],
      ]),
    });
    expect(curated.serverInfo).toEqual({
      name: 'backstage-mcp-broker/triage',
      title: 'Incident triage',
      version: expect.any(String),
    });
    expect(curated.status(new Set(['jira', 'grafana', 'deploy']), catalog, 2)).toEqual({
      name: 'triage',
      servers: ['jira', 'missing'],
      missingServers: ['missing'],
      unusedOverrides: ['deploy_run'],
      tools: 3,
      sessions: 2,
    });
  });

  it('tells a change apart when it alters what the endpoint shows', () => {
    const next = AggregatedCatalog.build([
      { backend: backend('deploy'), lists: lists([{ name: 'run' }, { name: 'rollback' }]) },
    ]);
    const curated = endpoint({ servers: ['jira'] });
    const unrelated = AggregatedCatalog.build([
      { backend: backend('deploy'), lists: lists([{ name: 'run' }]) },
    ]);
    const change = (previous: AggregatedCatalog, after: AggregatedCatalog) => ({
      kind: 'tools' as const,
      previous,
      next: after,
      visible: true,
      announcedBy: new Set<string>(),
    });
    expect(curated.mayHaveChanged(change(unrelated, next))).toBe(false);
    expect(curated.mayHaveChanged(change(catalog, next))).toBe(true);
    expect(
      curated.mayHaveChanged({
        ...change(catalog, catalog),
        visible: false,
        announcedBy: new Set(['deploy']),
      }),
    ).toBe(false);
    expect(
      curated.mayHaveChanged({
        ...change(catalog, catalog),
        visible: false,
        announcedBy: new Set(['jira']),
      }),
    ).toBe(true);
  });
});
