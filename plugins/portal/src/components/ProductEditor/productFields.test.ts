import { product } from '../../__testUtils__/fakes';
import {
  createBody,
  EMPTY_PRODUCT_FIELDS,
  fieldsOf,
  nameProblem,
  parseTags,
  patchBody,
} from './productFields';

describe('productFields', () => {
  it('builds a create body without empty optional fields, on the chosen route', () => {
    expect(
      createBody(
        {
          ...EMPTY_PRODUCT_FIELDS,
          displayName: ' Toystore ',
          tags: 'toys, ,shop',
          docsURL: 'https://d',
        },
        { namespace: 'toystore', name: 'toystore-route' },
        'toystore',
        'group:default/payments-team',
      ),
    ).toEqual({
      metadata: {
        namespace: 'toystore',
        name: 'toystore',
        annotations: { 'backstage.io/owner': 'group:default/payments-team' },
      },
      spec: {
        displayName: 'Toystore',
        targetRef: {
          group: 'gateway.networking.k8s.io',
          kind: 'HTTPRoute',
          name: 'toystore-route',
        },
        approvalMode: 'manual',
        publishStatus: 'Draft',
        tags: ['toys', 'shop'],
        documentation: { docsURL: 'https://d' },
      },
    });
  });

  it('patches only what changed, clears emptied fields with null, and sends the resourceVersion', () => {
    const before = product({ name: 'toystore', displayName: 'Toystore', tags: ['toys'] });
    const after = { ...fieldsOf(before), displayName: 'Toystore 2', tags: '', contactEmail: '' };
    expect(patchBody(before, after)).toEqual({
      metadata: { resourceVersion: '1' },
      spec: { displayName: 'Toystore 2', tags: null, contact: { email: null } },
    });
    expect(patchBody(before, fieldsOf(before))).toEqual({
      metadata: { resourceVersion: '1' },
      spec: {},
    });
  });

  it('accepts DNS-1123 labels only', () => {
    expect(nameProblem('toystore-2')).toBeUndefined();
    expect(nameProblem('')).toBe('A name is required');
    expect(nameProblem('Toystore')).toMatch(/Lower-case/);
    expect(nameProblem('-x')).toMatch(/Lower-case/);
    expect(nameProblem('a'.repeat(64))).toBe('At most 63 characters');
    expect(parseTags(' a, b ,,c')).toEqual(['a', 'b', 'c']);
  });
});
