import { EMPTY_KEY_LIST_FILTER, entityRefOf, keyListQuery } from './keyListFilter';

describe('keyListQuery', () => {
  it('sends nothing for an empty form', () => {
    expect(keyListQuery(EMPTY_KEY_LIST_FILTER)).toEqual({});
  });

  it('turns names into entity refs and sends the product only with its namespace', () => {
    expect(
      keyListQuery({
        namespace: ' toystore ',
        product: 'toys',
        owner: 'group:payments-team, bob',
        requester: 'alice',
        phase: 'Approved',
      }),
    ).toEqual({
      namespace: 'toystore',
      product: 'toys',
      owner: 'group:default/payments-team,user:default/bob',
      requester: 'user:default/alice',
      status: 'Approved',
    });
    expect(keyListQuery({ ...EMPTY_KEY_LIST_FILTER, product: 'toys' })).toEqual({});
  });

  it("fixes an owner's view to their own refs, whatever was typed", () => {
    expect(
      keyListQuery({ ...EMPTY_KEY_LIST_FILTER, owner: 'carol' }, [
        'user:default/bob',
        'group:default/payments-team',
      ]),
    ).toEqual({ owner: 'user:default/bob,group:default/payments-team' });
  });

  it('keeps full refs as they are', () => {
    expect(entityRefOf('user:other/alice', 'user')).toBe('user:other/alice');
  });
});
