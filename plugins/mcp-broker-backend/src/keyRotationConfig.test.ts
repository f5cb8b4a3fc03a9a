/* mcpBroker.keyRotation: defaults, durations in either form, and a bad value naming its key. */
import { ConfigReader } from '@backstage/config';
import { DEFAULT_KEY_MAX_AGE_MS, readKeyRotationConfig } from './keyRotationConfig';

describe('readKeyRotationConfig', () => {
  it('applies the defaults, and reads durations as objects or strings', () => {
    expect(readKeyRotationConfig(new ConfigReader({}))).toEqual({
      signingKeyMaxAgeMs: DEFAULT_KEY_MAX_AGE_MS,
      requestStateKeyMaxAgeMs: DEFAULT_KEY_MAX_AGE_MS,
      checkIntervalMs: 60_000,
      clockSkewMs: 60_000,
    });
    const config = new ConfigReader({
      mcpBroker: {
        keyRotation: { signingKeyMaxAge: { days: 7 }, checkInterval: '10s' },
      },
    });
    expect(readKeyRotationConfig(config)).toMatchObject({
      signingKeyMaxAgeMs: 7 * 24 * 3_600_000,
      checkIntervalMs: 10_000,
    });
  });

  it('refuses a duration under a second, naming the key', () => {
    const config = new ConfigReader({
      mcpBroker: { keyRotation: { clockSkew: { milliseconds: 10 } } },
    });
    expect(() => readKeyRotationConfig(config)).toThrow(
      'Invalid duration at mcpBroker.keyRotation.clockSkew: must be at least 1000 ms',
    );
  });
});
