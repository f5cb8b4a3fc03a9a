import { ConfigReader } from '@backstage/config';
import { isNamespaceName, readKubeConfigSource, readPositiveDurationMs } from './kubeConfigSource';

const section = (data: object) => new ConfigReader(data);

describe('readKubeConfigSource', () => {
  it('chooses in-cluster, a kubeconfig file, or the defaults', () => {
    expect(readKubeConfigSource(undefined, 'x.kubernetes')).toEqual({ type: 'default' });
    expect(readKubeConfigSource(section({ inCluster: true }), 'x.kubernetes')).toEqual({
      type: 'in-cluster',
    });
    const fromFile = readKubeConfigSource(section({ kubeconfig: '/k', context: 'c' }), 'x');
    expect(fromFile).toEqual({ type: 'kubeconfig', path: '/k', context: 'c' });
    expect(readKubeConfigSource(section({ context: 'c' }), 'x.kubernetes')).toEqual({
      type: 'default',
      context: 'c',
    });
  });

  it('refuses inCluster together with a kubeconfig or context, naming the section', () => {
    expect(() =>
      readKubeConfigSource(section({ inCluster: true, context: 'c' }), 'x.kubernetes'),
    ).toThrow(/^x\.kubernetes: set either inCluster or kubeconfig\/context, not both/);
  });
});

describe('readPositiveDurationMs', () => {
  const read = (data: object) =>
    readPositiveDurationMs(section(data), 'requestTimeout', {
      configPath: 'x.kubernetes',
      fallbackMs: 10_000,
    });

  it('reads durations in both forms, and falls back when absent', () => {
    expect(read({})).toBe(10_000);
    expect(read({ requestTimeout: '2s' })).toBe(2_000);
    expect(read({ requestTimeout: { milliseconds: 1500 } })).toBe(1_500);
  });

  it.each([['soon'], [{ seconds: 0 }], [{ seconds: -1 }]])('refuses %j naming the key', value => {
    expect(() => read({ requestTimeout: value })).toThrow(
      'Invalid x.kubernetes.requestTimeout: use a positive duration, e.g. "10s" or { seconds: 10 }',
    );
  });
});

describe('isNamespaceName', () => {
  it('accepts lowercase DNS-1123 labels of at most 63 characters only', () => {
    expect(isNamespaceName('team-a1')).toBe(true);
    expect(isNamespaceName('a'.repeat(63))).toBe(true);
    expect(isNamespaceName('a'.repeat(64))).toBe(false);
    expect(isNamespaceName('Team')).toBe(false);
    expect(isNamespaceName('-a')).toBe(false);
    expect(isNamespaceName('')).toBe(false);
  });
});
