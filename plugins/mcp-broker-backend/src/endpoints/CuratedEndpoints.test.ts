import { CuratedEndpoints } from './CuratedEndpoints';
import type { CuratedEndpointConfig } from './endpointConfig';

const config = (
  name: string,
  over: Partial<CuratedEndpointConfig> = {},
): CuratedEndpointConfig => ({
  name,
  servers: ['jira'],
  exclude: [],
  annotations: {},
  overrides: new Map(),
  ...over,
});

describe('CuratedEndpoints.replace (config reload)', () => {
  it('tells which endpoints went, came and changed, and keeps unchanged ones as they were', () => {
    const endpoints = new CuratedEndpoints([
      config('same', { overrides: new Map([['jira_search', { title: 'Search' }]]) }),
      config('changed'),
      config('removed'),
    ]);
    const same = endpoints.get('same');
    const before = endpoints.get('changed');
    const change = endpoints.replace([
      config('same', { overrides: new Map([['jira_search', { title: 'Search' }]]) }),
      config('changed', { exclude: ['jira_delete*'] }),
      config('added'),
    ]);
    expect(change.removed).toEqual(['removed']);
    expect(change.changed.map(({ previous, next }) => [previous?.name, next.name])).toEqual([
      ['changed', 'changed'],
      [undefined, 'added'],
    ]);
    expect(change.changed[0].previous).toBe(before);
    expect(endpoints.get('same')).toBe(same);
    expect(endpoints.get('changed')?.config.exclude).toEqual(['jira_delete*']);
    expect(endpoints.get('removed')).toBeUndefined();
    expect(endpoints.list().map(endpoint => endpoint.name)).toEqual(['same', 'changed', 'added']);
  });

  it('counts a changed override as a change', () => {
    const endpoints = new CuratedEndpoints([config('e')]);
    const change = endpoints.replace([
      config('e', { overrides: new Map([['jira_search', { description: 'new' }]]) }),
    ]);
    expect(change.changed).toHaveLength(1);
  });
});
