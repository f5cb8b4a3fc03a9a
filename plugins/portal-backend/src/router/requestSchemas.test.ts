import {
  apiProductPatchSchema,
  bulkReviewSchema,
  createApiKeyRequestSchema,
  createApiProductSchema,
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
});
