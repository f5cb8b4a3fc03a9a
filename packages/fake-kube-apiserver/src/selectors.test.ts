import { parseFieldSelector, parseLabelSelector } from './selectors';
import { KubeStatusError } from './KubeStatusError';

describe('label selectors (labels.Parse grammar)', () => {
  const labels = { app: 'toystore', tier: 'gold', 'example.com/owner': 'alice' };
  it.each([
    ['app=toystore', true],
    ['app==toystore', true],
    ['app!=toystore', false],
    ['missing!=x', true],
    ['tier in (gold,silver)', true],
    ['tier notin (gold)', false],
    ['missing notin (gold)', true],
    ['example.com/owner', true],
    ['!example.com/owner', false],
    ['app=toystore, tier in (silver)', false],
    ['', true],
  ])('%s → %s', (selector, expected) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(expected);
  });

  it('compares integers with > and <', () => {
    expect(parseLabelSelector('replicas>2').matches({ replicas: '3' })).toBe(true);
    expect(parseLabelSelector('replicas<2').matches({ replicas: '3' })).toBe(false);
  });

  it('accepts an empty value', () => {
    expect(parseLabelSelector('app=').matches({ app: '' })).toBe(true);
  });

  it.each([
    'app in toystore',
    'app=a b',
    'tier in ()',
    'a=user:default/alice',
    'bad key=1',
    'a=(b)',
  ])('rejects %j with 400 BadRequest', selector => {
    let error: unknown;
    try {
      parseLabelSelector(selector);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KubeStatusError);
    expect((error as KubeStatusError).status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
});

describe('field selectors', () => {
  it('supports =, == and != on supported fields only', () => {
    const fields = { 'metadata.name': 'a', 'metadata.namespace': 'ns' };
    const supported = ['metadata.name', 'metadata.namespace'];
    expect(parseFieldSelector('metadata.name=a', supported).matches(fields)).toBe(true);
    expect(parseFieldSelector('metadata.name==b', supported).matches(fields)).toBe(false);
    expect(
      parseFieldSelector('metadata.name!=b,metadata.namespace=ns', supported).matches(fields),
    ).toBe(true);
    expect(() => parseFieldSelector('spec.x=1', supported)).toThrow(
      'field label not supported: spec.x',
    );
  });
});
