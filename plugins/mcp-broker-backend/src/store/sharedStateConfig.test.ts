import { ConfigReader } from '@backstage/config';
import { readSessionStoreKind, readSignalNotifications } from './sharedStateConfig';

describe('mcpBroker.sessionStore', () => {
  it('defaults to memory and accepts database', () => {
    expect(readSessionStoreKind(new ConfigReader({}))).toBe('memory');
    expect(
      readSessionStoreKind(new ConfigReader({ mcpBroker: { sessionStore: 'database' } })),
    ).toBe('database');
  });

  it('refuses anything else with a message naming the key and the choices', () => {
    expect(() =>
      readSessionStoreKind(new ConfigReader({ mcpBroker: { sessionStore: 'redis' } })),
    ).toThrow(/mcpBroker\.sessionStore "redis".*"memory".*"database"/);
  });
});

describe('mcpBroker.signalNotifications', () => {
  it('defaults to true, may be turned off, and refuses what is not a boolean naming the key', () => {
    expect(readSignalNotifications(new ConfigReader({}))).toBe(true);
    expect(
      readSignalNotifications(new ConfigReader({ mcpBroker: { signalNotifications: false } })),
    ).toBe(false);
    expect(() =>
      readSignalNotifications(
        new ConfigReader({ mcpBroker: { signalNotifications: 'sometimes' } }),
      ),
    ).toThrow(/mcpBroker\.signalNotifications/);
  });
});
