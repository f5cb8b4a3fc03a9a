import { PrincipalDecisionCache } from './PrincipalDecisionCache';

describe('PrincipalDecisionCache (fake timers)', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  function counting() {
    let calls = 0;
    const decide = async () => `decision ${++calls}`;
    return { decide, calls: () => calls };
  }

  it('asks once per principal and catalog version while the decision is fresh', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    const { decide, calls } = counting();
    const version = {};
    for (let i = 0; i < 1000; i++)
      expect(await cache.get('user:default/alice', version, decide)).toBe('decision 1');
    expect(calls()).toBe(1);
    await cache.get('user:default/bob', version, decide);
    expect(calls()).toBe(2);
  });

  it('asks again when the catalog version changes', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    const { decide, calls } = counting();
    await cache.get('user:default/alice', 'v1', decide);
    expect(await cache.get('user:default/alice', 'v2', decide)).toBe('decision 2');
    expect(await cache.get('user:default/alice', 'v2', decide)).toBe('decision 2');
    expect(calls()).toBe(2);
  });

  it('asks again once maxAgeMs has passed since the decision was asked for', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    const { decide, calls } = counting();
    await cache.get('user:default/alice', 'v1', decide);
    jest.advanceTimersByTime(29_999);
    expect(await cache.get('user:default/alice', 'v1', decide)).toBe('decision 1');
    jest.advanceTimersByTime(1);
    expect(await cache.get('user:default/alice', 'v1', decide)).toBe('decision 2');
    expect(calls()).toBe(2);
  });

  it('shares one decision in flight among concurrent callers', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    let release!: (value: string) => void;
    const decide = jest.fn(() => new Promise<string>(resolve => (release = resolve)));
    const answers = Array.from({ length: 50 }, () => cache.get('user:default/alice', 'v1', decide));
    release('allowed');
    expect(await Promise.all(answers)).toEqual(Array(50).fill('allowed'));
    expect(decide).toHaveBeenCalledTimes(1);
  });

  it('never remembers a failed decision', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    const failing = jest.fn(async () => {
      throw new Error('permission backend unavailable');
    });
    await expect(cache.get('user:default/alice', 'v1', failing)).rejects.toThrow('unavailable');
    expect(cache.size).toBe(0);
    expect(await cache.get('user:default/alice', 'v1', async () => 'recovered')).toBe('recovered');
  });

  it('drops expired decisions of idle principals as new decisions arrive', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000 });
    const { decide } = counting();
    await cache.get('idle-1', 'v1', decide);
    await cache.get('idle-2', 'v1', decide);
    jest.advanceTimersByTime(30_000);
    await cache.get('active', 'v2', decide);
    expect(cache.size).toBe(1);
  });

  it('keeps at most maxEntries principals, dropping the oldest decision', async () => {
    const cache = new PrincipalDecisionCache<string>({ maxAgeMs: 30_000, maxEntries: 2 });
    const { decide, calls } = counting();
    await cache.get('a', 'v1', decide);
    await cache.get('b', 'v1', decide);
    await cache.get('c', 'v1', decide);
    expect(cache.size).toBe(2);
    await cache.get('c', 'v1', decide);
    await cache.get('b', 'v1', decide);
    expect(calls()).toBe(3);
    await cache.get('a', 'v1', decide);
    expect(calls()).toBe(4);
  });
});
