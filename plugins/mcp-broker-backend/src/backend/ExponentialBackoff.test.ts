import { ExponentialBackoff } from './ExponentialBackoff';

describe('ExponentialBackoff', () => {
  it('doubles from the initial delay up to the maximum, with jitter within [half, full]', () => {
    const low = new ExponentialBackoff(500, 4000, () => 0);
    expect([1, 2, 3, 4, 5, 6].map(() => low.nextDelayMs())).toEqual([
      250, 500, 1000, 2000, 2000, 2000,
    ]);
    const high = new ExponentialBackoff(500, 4000, () => 1);
    expect([1, 2, 3, 4, 5].map(() => high.nextDelayMs())).toEqual([500, 1000, 2000, 4000, 4000]);
  });

  it('starts over after a reset', () => {
    const backoff = new ExponentialBackoff(100, 1000, () => 1);
    backoff.nextDelayMs();
    backoff.nextDelayMs();
    expect(backoff.failures).toBe(2);
    backoff.reset();
    expect(backoff.nextDelayMs()).toBe(100);
  });

  it('spreads delays of many brokers (jitter)', () => {
    const delays = new Set(
      Array.from({ length: 20 }, () => new ExponentialBackoff(1000, 1000).nextDelayMs()),
    );
    expect(delays.size).toBeGreaterThan(5);
  });
});
