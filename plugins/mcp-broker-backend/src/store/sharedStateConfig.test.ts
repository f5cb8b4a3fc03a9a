import { ConfigReader } from '@backstage/config';
import { readSessionStoreKind } from './sharedStateConfig';

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
