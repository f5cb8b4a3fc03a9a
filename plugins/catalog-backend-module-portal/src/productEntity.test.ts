/*
 * The mapping of API products onto API entities, checked against the catalog's own
 * validators (catalog-model), so a name or tag the catalog would reject fails here.
 */
import {
  CommonValidatorFunctions,
  KubernetesValidatorFunctions,
  apiEntityV1alpha1Validator,
} from '@backstage/catalog-model';
import type { ApiProduct } from '@devportal/plugin-portal-common';
import {
  PORTAL_API_PRODUCT_ANNOTATION,
  apiEntityName,
  normalizeTags,
  productToEntity,
} from './productEntity';

const OPTIONS = {
  productUrlTemplate: 'https://portal.example.com/products/{namespace}/{name}',
  location: 'portal-api-products:portal',
};

const product = (overrides: Partial<ApiProduct['spec']> = {}): ApiProduct => ({
  apiVersion: 'devportal.kuadrant.io/v1alpha1',
  kind: 'APIProduct',
  metadata: {
    namespace: 'toystore',
    name: 'toys',
    uid: 'u1',
    resourceVersion: '1',
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { 'backstage.io/owner': 'group:default/payments-team' },
  },
  spec: {
    displayName: 'Toys',
    targetRef: {
      group: 'gateway.networking.k8s.io',
      kind: 'HTTPRoute',
      name: 'toystore',
    },
    approvalMode: 'manual',
    publishStatus: 'Published',
    ...overrides,
  },
  status: { plans: [{ tier: 'gold' }, { tier: 'silver' }] },
});

describe('apiEntityName', () => {
  it('joins namespace and name with a dot, which neither DNS label can contain', () => {
    expect(apiEntityName({ namespace: 'toystore', name: 'toys' })).toBe('toystore.toys');
    expect(apiEntityName({ namespace: 'a-b', name: 'c' })).not.toBe(
      apiEntityName({ namespace: 'a', name: 'b-c' }),
    );
  });

  it('keeps long names valid and at most 63 characters, and unique by a hash', () => {
    const namespace = 'n'.repeat(63);
    const names = ['x'.repeat(63), `${'x'.repeat(62)}y`, 'short'].map(name =>
      apiEntityName({ namespace, name }),
    );
    for (const name of names) {
      expect(name.length).toBeLessThanOrEqual(63);
      expect(KubernetesValidatorFunctions.isValidObjectName(name)).toBe(true);
    }
    expect(new Set(names).size).toBe(3);
    expect(names[0]).toMatch(/^n{52}-[0-9a-f]{10}$/);
  });

  it('does not leave a separator before the hash when the cut falls on one', () => {
    // namespace (51) + '.' puts the dot at position 52, the last character of the prefix.
    const name = apiEntityName({
      namespace: 'n'.repeat(51),
      name: 'x'.repeat(20),
    });
    expect(name).toMatch(/^n{51}-[0-9a-f]{10}$/);
    expect(KubernetesValidatorFunctions.isValidObjectName(name)).toBe(true);
  });

  it('is the same for the same product every time', () => {
    const ref = { namespace: 'n'.repeat(40), name: 'x'.repeat(40) };
    expect(apiEntityName(ref)).toBe(apiEntityName({ ...ref }));
  });
});

describe('normalizeTags', () => {
  it('lower-cases, turns other characters into single dashes and drops duplicates', () => {
    expect(
      normalizeTags(['Payments', 'public API', 'public_api', '  v2 / beta ', 'c++', '#1', '---']),
    ).toEqual(['payments', 'public-api', 'v2-beta', 'c++', '#1']);
  });

  it('cuts tags to 63 characters without a trailing dash', () => {
    const [tag] = normalizeTags([`${'a'.repeat(62)} b`]);
    expect(tag).toBe('a'.repeat(62));
    expect(CommonValidatorFunctions.isValidTag(tag)).toBe(true);
  });

  it('gives only tags the catalog accepts', () => {
    const tags = normalizeTags(['ÜBER api', 'x'.repeat(100), 'a:b', 'café', 'ok']);
    expect(tags.every(tag => CommonValidatorFunctions.isValidTag(tag))).toBe(true);
  });

  it('accepts no tags', () => {
    expect(normalizeTags(undefined)).toEqual([]);
  });
});

describe('productToEntity', () => {
  it('maps a product without an OpenAPI URL onto a valid API entity of type other', async () => {
    const entity = productToEntity(
      product({
        description: 'All the toys',
        tags: ['Toys', 'toys'],
        documentation: { docsURL: 'https://docs.example.com/toys' },
      }),
      OPTIONS,
    )!;
    expect(entity).toMatchObject({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'API',
      metadata: {
        name: 'toystore.toys',
        title: 'Toys',
        description: 'All the toys',
        tags: ['toys'],
        annotations: { [PORTAL_API_PRODUCT_ANNOTATION]: 'toystore/toys' },
      },
      spec: {
        type: 'other',
        lifecycle: 'production',
        owner: 'group:default/payments-team',
      },
    });
    expect(entity.metadata.links).toEqual([
      expect.objectContaining({
        url: 'https://portal.example.com/products/toystore/toys',
      }),
      expect.objectContaining({
        url: 'https://docs.example.com/toys',
        title: 'Documentation',
      }),
    ]);
    expect(entity.spec.definition).toContain('# Toys');
    expect(entity.spec.definition).toContain('Plans: gold, silver.');
    expect(await apiEntityV1alpha1Validator.check(entity)).toBe(true);
  });

  it('points an openapi entity at the OpenAPI URL through a $text placeholder', () => {
    const entity = productToEntity(
      product({
        documentation: {
          openAPISpecURL: 'https://api.example.com/openapi.yaml',
        },
      }),
      OPTIONS,
    )!;
    expect(entity.spec.type).toBe('openapi');
    expect(entity.spec.definition).toEqual({
      $text: 'https://api.example.com/openapi.yaml',
    });
  });

  it('never leaves the definition empty, even for a bare product', () => {
    const entity = productToEntity({ ...product(), status: undefined }, OPTIONS)!;
    expect(entity.spec.definition.trim()).not.toBe('');
    expect(entity.metadata.description).toBeUndefined();
    expect(entity.metadata.tags).toEqual([]);
  });

  it('gives a product without an owner no entity', () => {
    const bare = product();
    bare.metadata.annotations = {};
    expect(productToEntity(bare, OPTIONS)).toBeUndefined();
  });
});

describe('productToEntity of an MCP product (contract mcp-access §3.6)', () => {
  const mcp = product({
    targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
    plans: [
      { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } },
      {
        tier: 'gold',
        limits: {
          toolCalls: [
            { calls: 100, per: 'day' },
            { calls: 10, per: 'minute', tools: ['deploy'] },
          ],
        },
      },
    ],
  });

  it('names its server in the annotation the broker family uses, and stays of type other', () => {
    const entity = productToEntity(mcp, OPTIONS)!;
    expect(entity.metadata.annotations?.['mcp.devportal.io/server']).toBe('example');
    expect(entity.metadata.annotations?.['mcp.devportal.io/endpoint']).toBeUndefined();
    expect(entity.spec.type).toBe('other');
    expect(productToEntity(product(), OPTIONS)!.metadata.annotations).not.toHaveProperty(
      'mcp.devportal.io/server',
    );
  });

  it('lists its plans as quotas and says the sign-in is the credential', () => {
    const definition = productToEntity(mcp, OPTIONS)!.spec.definition;
    expect(definition).toContain('- bronze: 5 tool calls per day (UTC)');
    expect(definition).toContain(
      '- gold: 100 tool calls per day (UTC); 10 calls of deploy per minute',
    );
    expect(definition).toContain(
      'Request access in the portal; your own sign-in is the credential.',
    );
    expect(definition).not.toContain('API key');
  });
});
