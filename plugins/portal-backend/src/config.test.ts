import { ConfigReader } from '@backstage/config';
import type { JsonObject } from '@backstage/types';
import { readPortalConfig } from './config';

const read = (portal: JsonObject) => readPortalConfig(new ConfigReader({ portal }));

describe('readPortalConfig', () => {
  it('applies the documented defaults', () => {
    expect(read({})).toEqual({
      storage: 'database',
      manifests: [],
      permissionEnabled: false,
      requestBodyTimeoutMs: 30_000,
      notificationLinks: {
        requestUrlTemplate: '/portal/requests/{namespace}/{name}',
        requestsUrl: '/portal/requests',
      },
      keyExpirySchedule: { frequency: { minutes: 1 }, timeout: { minutes: 1 } },
    });
  });

  it('reads portal.keyExpiry.schedule, and fails start-up naming it when it is wrong', () => {
    expect(
      read({ keyExpiry: { schedule: { frequency: '5m', timeout: { seconds: 30 } } } })
        .keyExpirySchedule,
    ).toMatchObject({ frequency: { minutes: 5 }, timeout: { seconds: 30 } });
    expect(() => read({ keyExpiry: { schedule: { frequency: 'often' } } })).toThrow(
      /portal\.keyExpiry\.schedule/,
    );
  });

  it.each([[{ seconds: 5 }], ['5s'], ['PT5S']])(
    'reads portal.requestBodyTimeout in every duration form (%j)',
    requestBodyTimeout => {
      expect(read({ requestBodyTimeout }).requestBodyTimeoutMs).toBe(5000);
    },
  );

  it.each([['soon'], [{ seconds: 0 }]])(
    'fails start-up naming portal.requestBodyTimeout for %j',
    requestBodyTimeout => {
      expect(() => read({ requestBodyTimeout })).toThrow(/portal\.requestBodyTimeout/);
    },
  );
});
