/**
 * Discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`,
 * `/apis/<g>/<v>`, `/version`). client-node's `KubernetesObjectApi` reads
 * `/api/v1` or `/apis/<g>/<v>` to map a kind to its plural and scope.
 */
import { ResourceType } from './resources';
import { ResourceRegistry } from './ResourceRegistry';

const RESOURCE_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];

/** The discovery document for a path, or undefined when the path is not a discovery path. */
export function discoveryDocument(
  registry: ResourceRegistry,
  path: string,
  serverAddress: string,
): object | undefined {
  const parts = path.split('/').filter(p => p !== '');
  if (parts.length === 1 && parts[0] === 'version') {
    return {
      major: '1',
      minor: '33',
      gitVersion: 'v1.33.0-fake',
      gitCommit: '0000000000000000000000000000000000000000',
      gitTreeState: 'clean',
      buildDate: '2025-01-01T00:00:00Z',
      goVersion: 'go1.24.0',
      compiler: 'gc',
      platform: 'linux/amd64',
    };
  }
  if (parts.length === 1 && parts[0] === 'api') {
    return {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }
  if (parts.length === 2 && parts[0] === 'api' && parts[1] === 'v1') {
    return {
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: resourceList(registry.all().filter(rt => rt.group === '' && rt.version === 'v1')),
    };
  }
  if (parts.length === 1 && parts[0] === 'apis') {
    return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(registry) };
  }
  if (parts.length === 2 && parts[0] === 'apis') {
    const group = groups(registry).find(g => g.name === parts[1]);
    return group ? { kind: 'APIGroup', apiVersion: 'v1', ...group } : undefined;
  }
  if (parts.length === 3 && parts[0] === 'apis' && registry.hasGroupVersion(parts[1], parts[2])) {
    return {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${parts[1]}/${parts[2]}`,
      resources: resourceList(
        registry.all().filter(rt => rt.group === parts[1] && rt.version === parts[2]),
      ),
    };
  }
  return undefined;
}

function resourceList(types: ResourceType[]): object[] {
  return types.flatMap(rt => [
    {
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: RESOURCE_VERBS,
      ...(rt.shortNames ? { shortNames: rt.shortNames } : {}),
    },
    ...(rt.statusSubresource
      ? [
          {
            name: `${rt.plural}/status`,
            singularName: '',
            namespaced: rt.namespaced,
            kind: rt.kind,
            verbs: ['get', 'patch', 'update'],
          },
        ]
      : []),
  ]);
}

function groups(registry: ResourceRegistry) {
  const byGroup = new Map<string, Set<string>>();
  for (const rt of registry.all()) {
    if (rt.group === '') continue;
    if (!byGroup.has(rt.group)) byGroup.set(rt.group, new Set());
    byGroup.get(rt.group)!.add(rt.version);
  }
  return [...byGroup].map(([name, versions]) => {
    const list = [...versions].map(version => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: list, preferredVersion: list[0] };
  });
}
