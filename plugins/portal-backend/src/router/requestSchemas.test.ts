import {
  apiProductPatchSchema,
  bulkReviewSchema,
  createApiKeyRequestSchema,
  createApiProductSchema,
  productListQuerySchema,
  requestListQuerySchema,
} from '@devportal/plugin-portal-common';
import { parseInput } from './parseInput';

const route = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
};

describe('request schemas', () => {
  it('names unknown and server-owned fields in one readable message', () => {
    expect(() =>
      parseInput(
        createApiProductSchema,
        {
          metadata: { namespace: 'toystore', name: 'p', resourceVersion: '3' },
          spec: { displayName: 'P', targetRef: route, colour: 'red' },
          status: {},
        },
        'request body',
      ),
    ).toThrow(
      /metadata\.resourceVersion is set by the server.*spec\.colour is not a known field|spec\.colour is not a known field.*metadata\.resourceVersion is set by the server/,
    );
  });

  it('refuses names that are not DNS-1123 labels, naming the field', () => {
    expect(() =>
      parseInput(
        createApiProductSchema,
        {
          metadata: { namespace: 'toystore', name: 'Not_OK' },
          spec: { displayName: 'P', targetRef: route },
        },
        'request body',
      ),
    ).toThrow(/metadata\.name: must be a DNS-1123 label/);
  });

  it('refuses requestedBy in a key request: the server sets it', () => {
    expect(() =>
      parseInput(
        createApiKeyRequestSchema,
        {
          apiProductRef: { namespace: 'toystore', name: 'p' },
          planTier: 'gold',
          requestedBy: { userId: 'x' },
        },
        'request body',
      ),
    ).toThrow(/requestedBy is set by the server/);
  });

  it('accepts a merge patch with nulls for optional fields but not for the display name', () => {
    expect(
      parseInput(
        apiProductPatchSchema,
        { spec: { description: null, contact: { email: null } } },
        'body',
      ),
    ).toEqual({ spec: { description: null, contact: { email: null } } });
    expect(() =>
      parseInput(apiProductPatchSchema, { spec: { displayName: null } }, 'body'),
    ).toThrow(/spec\.displayName/);
    expect(() =>
      parseInput(apiProductPatchSchema, { metadata: { annotations: { other: 'x' } } }, 'body'),
    ).toThrow(/metadata\.annotations\.other is not a known field/);
  });

  it('refuses duplicate and empty bulk lists, and more than 100 items', () => {
    const ref = { namespace: 'toystore', name: 'k' };
    expect(() => parseInput(bulkReviewSchema, { requests: [ref, ref] }, 'body')).toThrow(
      /requests\.1: duplicates requests\[0\] \(toystore\/k\)/,
    );
    expect(() => parseInput(bulkReviewSchema, { requests: [] }, 'body')).toThrow(/requests/);
    const many = Array.from({ length: 101 }, (_, i) => ({
      namespace: 'toystore',
      name: `k${i}`,
    }));
    expect(() => parseInput(bulkReviewSchema, { requests: many }, 'body')).toThrow(/100/);
  });

  it('treats empty query values as absent', () => {
    expect(parseInput(requestListQuerySchema, { status: '', namespace: '' }, 'query')).toEqual({});
  });

  it('checks the status query value and ignores unknown query parameters', () => {
    expect(
      parseInput(requestListQuerySchema, { status: 'Approved', colour: 'red' }, 'query'),
    ).toEqual({
      status: 'Approved',
    });
    expect(() => parseInput(requestListQuerySchema, { status: 'Done' }, 'query')).toThrow(
      /invalid query: status: Invalid enum value/,
    );
  });

  it('reads the product, owner and requester filters of the key list, refusing malformed ones', () => {
    expect(
      parseInput(
        requestListQuerySchema,
        {
          namespace: 'toystore',
          product: 'toys',
          owner: 'User:default/Bob, group:default/payments-team',
          requester: 'user:default/Alice',
        },
        'query',
      ),
    ).toEqual({
      namespace: 'toystore',
      product: 'toys',
      owner: 'user:default/bob,group:default/payments-team',
      requester: 'user:default/alice',
    });
    expect(() => parseInput(requestListQuerySchema, { product: 'toys' }, 'query')).toThrow(
      /product: product needs namespace/,
    );
    expect(() => parseInput(requestListQuerySchema, { owner: 'bob' }, 'query')).toThrow(
      /owner: must be a full entity ref such as user:default\/alice/,
    );
    expect(() => parseInput(requestListQuerySchema, { requester: 'alice' }, 'query')).toThrow(
      /requester: must be a full entity ref/,
    );
    const tooMany = Array.from({ length: 51 }, (_, i) => `user:default/u${i}`).join(',');
    expect(() => parseInput(requestListQuerySchema, { owner: tooMany }, 'query')).toThrow(
      /at most 50 entity refs/,
    );
    expect(
      parseInput(productListQuerySchema, { owner: 'group:default/payments-team' }, 'query'),
    ).toEqual({ owner: 'group:default/payments-team' });
  });
});
