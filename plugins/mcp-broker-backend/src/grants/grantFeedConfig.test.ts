import { ConfigReader } from '@backstage/config';
import { readGrantFeedConfig } from './grantFeedConfig';

const read = (accessGrants?: object) =>
  readGrantFeedConfig(new ConfigReader({ mcpBroker: accessGrants && { accessGrants } }));

describe('mcpBroker.accessGrants pollInterval and staleAfter', () => {
  it('defaults to a 5 s poll and 15 s of staleness', () => {
    expect(read()).toEqual({ pollMs: 5_000, staleAfterMs: 15_000 });
    expect(read({ fullSync: { frequency: { seconds: 60 } } })).toEqual({
      pollMs: 5_000,
      staleAfterMs: 15_000,
    });
  });

  it('reads both, and lets an unset staleAfter follow a long poll', () => {
    expect(read({ pollInterval: '2s', staleAfter: { seconds: 4 } })).toEqual({
      pollMs: 2_000,
      staleAfterMs: 4_000,
    });
    expect(read({ pollInterval: { hours: 1 } })).toEqual({
      pollMs: 3_600_000,
      staleAfterMs: 10_800_000,
    });
  });

  it('fails start-up naming the key of a wrong value', () => {
    expect(() => read({ pollInterval: 'often' })).toThrow(
      /Invalid duration at mcpBroker\.accessGrants\.pollInterval/,
    );
    expect(() => read({ pollInterval: { milliseconds: 10 } })).toThrow(/at least 100 ms/);
    expect(() => read({ pollInterval: '10s', staleAfter: '15s' })).toThrow(
      /mcpBroker\.accessGrants\.staleAfter: must be at least twice mcpBroker\.accessGrants\.pollInterval \(20000 ms\)/,
    );
  });
});
