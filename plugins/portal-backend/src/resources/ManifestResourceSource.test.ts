import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { walkPages } from '../store/testing/walkPages';
import { ManifestResourceSource } from './ManifestResourceSource';
import { plansForRoute, plansOfPolicies } from './plansForRoute';

const TOYSTORE_MANIFEST = resolve(__dirname, '../../../../examples/toystore.yaml');

const ROUTE = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: shop
  namespace: shop
spec:
  hostnames: [shop.example.com]
`;

function planPolicy(name: string, route: string, tiers: string[], namespace = 'shop'): string {
  return `apiVersion: extensions.kuadrant.io/v1alpha1
kind: PlanPolicy
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: ${route}
  plans:
${tiers.map(tier => `    - tier: ${tier}\n      description: ${tier} plan (${name})`).join('\n')}
`;
}

describe('ManifestResourceSource', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'portal-manifests-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  async function file(name: string, text: string): Promise<string> {
    const path = join(directory, name);
    await writeFile(path, text);
    return path;
  }

  async function startupError(files: string[]): Promise<string> {
    const error = await ManifestResourceSource.fromFiles(files).then(
      () => undefined,
      (e: Error) => e,
    );
    if (error === undefined) {
      throw new Error('expected start-up to fail');
    }
    return error.message;
  }

  describe('with the toystore fixture', () => {
    let source: ManifestResourceSource;
    beforeAll(async () => {
      source = await ManifestResourceSource.fromFiles([TOYSTORE_MANIFEST]);
    });

    it('lists each kind, ordered by namespace and name', async () => {
      const names = async (kind: Parameters<typeof source.list>[0]) =>
        (await source.list(kind)).map(o => `${o.metadata.namespace}/${o.metadata.name}`);
      expect(await names('HTTPRoute')).toEqual(['toystore/toystore', 'toystore/toystore-admin']);
      expect(await names('PlanPolicy')).toEqual(['toystore/toystore-plans']);
      expect(await names('AuthPolicy')).toEqual(['toystore/toystore-auth']);
      expect(await names('RateLimitPolicy')).toEqual(['toystore/toystore-rlp']);
    });

    it('filters by namespace', async () => {
      expect(await source.list('HTTPRoute', { namespace: 'toystore' })).toHaveLength(2);
      expect(await source.list('HTTPRoute', { namespace: 'elsewhere' })).toEqual([]);
    });

    it('gets one object by kind and ref, as written in the file', async () => {
      expect(
        await source.get('HTTPRoute', { namespace: 'toystore', name: 'toystore' }),
      ).toMatchObject({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { namespace: 'toystore', name: 'toystore', labels: { app: 'toystore' } },
        spec: { hostnames: ['api.toystore.example.com'] },
      });
      expect(await source.get('PlanPolicy', { namespace: 'toystore', name: 'toystore' })).toBe(
        undefined,
      );
      expect(await source.get('HTTPRoute', { namespace: 'other', name: 'toystore' })).toBe(
        undefined,
      );
    });

    it('hands out copies that callers cannot use to change the source', async () => {
      const ref = { namespace: 'toystore', name: 'toystore-plans' };
      const first = await source.get('PlanPolicy', ref);
      (first!.spec as { plans: unknown[] }).plans.length = 0;
      first!.metadata.name = 'changed';
      const [listed] = await source.list('PlanPolicy');
      listed.metadata.namespace = 'changed';
      expect(await source.get('PlanPolicy', ref)).toMatchObject({
        metadata: ref,
        spec: { plans: [{ tier: 'gold' }, { tier: 'silver' }, { tier: 'bronze' }] },
      });
    });

    it('derives the plans of the toystore route from its PlanPolicy', async () => {
      expect(await plansForRoute(source, 'toystore', 'toystore')).toEqual([
        { tier: 'gold', description: 'For production use', limits: { daily: 100000 } },
        { tier: 'silver', description: 'For teams', limits: { daily: 10000 } },
        { tier: 'bronze', description: 'To try things out', limits: { daily: 1000 } },
      ]);
      expect(await plansForRoute(source, 'toystore', 'toystore-admin')).toEqual([]);
      expect(await plansForRoute(source, 'other', 'toystore')).toEqual([]);
    });
  });

  it('pages a kind in creation-time order, then namespace and name, the cursor only while more follow', async () => {
    const route = (namespace: string, name: string, created?: string) =>
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: ${name}
  namespace: ${namespace}
${created === undefined ? '' : `  creationTimestamp: "${created}"\n`}spec: {}
`;
    const source = ManifestResourceSource.fromManifests([
      {
        source: 'routes.yaml',
        text: [
          route('b', 'late', '2030-01-02T00:00:00Z'),
          route('a', 'early', '2030-01-01T00:00:00Z'),
          route('b', 'early', '2030-01-01T00:00:00Z'),
          route('z', 'undated'),
        ].join('---\n'),
      },
    ]);
    const pages = await walkPages(page => source.listPage('HTTPRoute', {}, page), 1);
    const walked = pages.flat().map(r => `${r.metadata.namespace}/${r.metadata.name}`);
    expect(walked).toEqual(['z/undated', 'a/early', 'b/early', 'b/late']);
    const inB = await source.listPage('HTTPRoute', { namespace: 'b' }, { limit: 2 });
    expect(inB.items).toHaveLength(2);
    expect(inB.cursor).toBeUndefined();
  });

  it('reads several files, multi-document, skipping empty documents', async () => {
    const a = await file('a.yaml', `# leading comment\n---\n${ROUTE}---\n# nothing\n---\n`);
    const b = await file('b.yaml', `${planPolicy('shop-plans', 'shop', ['free'])}`);
    // Relative paths resolve against the working directory (the backend's).
    const source = await ManifestResourceSource.fromFiles([relative(process.cwd(), a), b]);
    expect(await source.list('HTTPRoute')).toHaveLength(1);
    expect(await plansForRoute(source, 'shop', 'shop')).toEqual([
      { tier: 'free', description: 'free plan (shop-plans)' },
    ]);
  });

  describe('fails start-up naming the file and the document', () => {
    it('when a file is missing', async () => {
      const missing = join(directory, 'missing.yaml');
      expect(await startupError([missing])).toMatch(
        new RegExp(`Portal manifest ${missing} cannot be read`),
      );
    });

    it('when a file is not YAML', async () => {
      const bad = await file('bad.yaml', 'kind: [unclosed\n');
      expect(await startupError([bad])).toContain(`Portal manifest ${bad} is not valid YAML`);
    });

    it('when a kind is not one of the four', async () => {
      const bad = await file(
        'bad.yaml',
        `${ROUTE}---\napiVersion: gateway.networking.k8s.io/v1\nkind: HttpRoute\nmetadata: {name: x, namespace: shop}\n`,
      );
      const message = await startupError([bad]);
      expect(message).toContain(`${bad}, document 2 (HttpRoute shop/x)`);
      expect(message).toContain('kind "HttpRoute" is not one of HTTPRoute, PlanPolicy');
    });

    it('when the apiVersion does not match the kind', async () => {
      const bad = await file(
        'bad.yaml',
        ROUTE.replace('gateway.networking.k8s.io/v1', 'gateway.networking.k8s.io/v1beta1'),
      );
      expect(await startupError([bad])).toMatch(
        /document 1 \(HTTPRoute shop\/shop\) is invalid: apiVersion: must be gateway\.networking\.k8s\.io\/v1 for kind HTTPRoute/,
      );
    });

    it('when an object has no namespace or a bad name', async () => {
      const noNamespace = await file('a.yaml', ROUTE.replace('  namespace: shop\n', ''));
      expect(await startupError([noNamespace])).toMatch(
        /document 1 \(HTTPRoute undefined\/shop\) is invalid: metadata\.namespace: is required/,
      );
      const badName = await file('b.yaml', ROUTE.replace('name: shop', 'name: Shop_1'));
      expect(await startupError([badName])).toContain(
        'metadata.name: must be a lowercase DNS-1123',
      );
    });

    it('when a PlanPolicy has no plans or a plan has no tier', async () => {
      const noPlans = await file(
        'a.yaml',
        planPolicy('p', 'shop', ['x']).replace(/ {2}plans:[\s\S]*$/, '  plans: []\n'),
      );
      expect(await startupError([noPlans])).toMatch(
        /PlanPolicy shop\/p\) is invalid: spec\.plans:/,
      );
      const noTier = await file(
        'b.yaml',
        planPolicy('p', 'shop', ['x']).replace('tier: x', 'name: x'),
      );
      expect(await startupError([noTier])).toContain('spec.plans.0.tier: Required');
    });

    it('when a document is not a mapping', async () => {
      const bad = await file('bad.yaml', `${ROUTE}---\n- just\n- a list\n`);
      expect(await startupError([bad])).toContain(`${bad}, document 2 is not a Kubernetes object`);
    });

    it('when two documents define the same object', async () => {
      const a = await file('a.yaml', ROUTE);
      const b = await file('b.yaml', `${planPolicy('p', 'shop', ['x'])}---\n${ROUTE}`);
      expect(await startupError([a, b])).toContain(
        `${b}, document 2 (HTTPRoute shop/shop) defines the same object as ${a}, document 1`,
      );
    });
  });
});

describe('plansOfPolicies', () => {
  function policy(name: string, spec: unknown, namespace = 'shop', kind = 'PlanPolicy') {
    return {
      apiVersion: 'extensions.kuadrant.io/v1alpha1',
      kind,
      metadata: { namespace, name },
      spec,
    };
  }
  const target = (name: string, group?: string) => ({
    ...(group !== undefined && { group }),
    kind: 'HTTPRoute',
    name,
  });

  it('takes the plans of PlanPolicies targeting the route in its namespace only', () => {
    const plans = plansOfPolicies(
      [
        policy('b', { targetRef: target('shop'), plans: [{ tier: 'silver' }, { tier: 'gold' }] }),
        policy('a', {
          targetRef: target('shop', 'gateway.networking.k8s.io'),
          plans: [{ tier: 'gold', description: 'first' }],
        }),
        policy('c', { targetRef: target('other'), plans: [{ tier: 'other-route' }] }),
        policy('d', { targetRef: target('shop'), plans: [{ tier: 'other-ns' }] }, 'elsewhere'),
        policy('e', { targetRef: target('shop', 'example.com'), plans: [{ tier: 'other-group' }] }),
        policy('f', { targetRef: { kind: 'Gateway', name: 'shop' }, plans: [{ tier: 'gateway' }] }),
        policy(
          'g',
          { targetRef: target('shop'), plans: [{ tier: 'rlp' }] },
          'shop',
          'RateLimitPolicy',
        ),
        policy('h', { targetRef: target('shop') }),
      ],
      'shop',
      'shop',
    );
    // Policies in name order, a repeated tier once (first wins).
    expect(plans).toEqual([{ tier: 'gold', description: 'first' }, { tier: 'silver' }]);
  });
});
