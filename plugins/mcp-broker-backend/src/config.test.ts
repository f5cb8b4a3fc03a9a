import { ConfigReader } from '@backstage/config';
import { DEFAULT_LIST_TTL_MS, readBrokerConfig } from './config';

const read = (mcpBroker: unknown, extra: Record<string, unknown> = {}) =>
  readBrokerConfig(new ConfigReader({ ...extra, mcpBroker } as never));

describe('readBrokerConfig', () => {
  it('applies defaults: prefix "<name>_", no headers, documented durations', () => {
    const config = read({ servers: [{ name: 'example', url: 'http://127.0.0.1:3101/mcp' }] });
    expect(config.servers).toEqual([
      {
        name: 'example',
        url: 'http://127.0.0.1:3101/mcp',
        toolPrefix: 'example_',
        headers: {},
        source: { type: 'config' },
      },
    ]);
    expect(config.reconnect).toEqual({ initialDelayMs: 500, maxDelayMs: 30_000 });
    expect(config.keepAliveMs).toBe(15_000);
    expect(config.elicitationTtlMs).toBe(600_000);
    expect(config.toolCallTimeoutMs).toBe(300_000);
    expect(config.maxRequestBodyBytes).toBe(4 * 1024 * 1024);
    expect(config.requestBodyTimeoutMs).toBe(30_000);
  });

  it('reads mcpBroker.tasks with its defaults and names the key of a bad value', () => {
    expect(read({ servers: [] }).tasks).toEqual({
      enabled: true,
      perPerson: 64,
      maxTtlMs: 24 * 3_600_000,
      minPollIntervalMs: 1000,
      maxStoredResultBytes: 1024 * 1024,
    });
    expect(
      read({
        servers: [],
        tasks: { enabled: false, perPerson: 3, maxTtl: { minutes: 5 }, minPollInterval: '2s' },
      }).tasks,
    ).toMatchObject({ enabled: false, perPerson: 3, maxTtlMs: 300_000, minPollIntervalMs: 2000 });
    expect(() => read({ servers: [], tasks: { perPerson: 0 } })).toThrow(
      'Invalid mcpBroker.tasks.perPerson: must be a positive integer',
    );
    expect(() => read({ servers: [], tasks: { maxTtl: 'soon' } })).toThrow(
      /mcpBroker\.tasks\.maxTtl/,
    );
  });

  it('reads the request body limits', () => {
    const config = read({ servers: [], maxRequestBodyBytes: 65_536, requestBodyTimeout: '5s' });
    expect(config.maxRequestBodyBytes).toBe(65_536);
    expect(config.requestBodyTimeoutMs).toBe(5000);
  });

  it('keeps permission decisions at most 30 s (default), shorter when configured, never longer', () => {
    expect(read({ servers: [] }).permissionDecisionMaxAgeMs).toBe(30_000);
    expect(
      read({ servers: [], permissionDecisionMaxAge: { seconds: 2 } }).permissionDecisionMaxAgeMs,
    ).toBe(2000);
    expect(() => read({ servers: [], permissionDecisionMaxAge: { minutes: 1 } })).toThrow(
      'Invalid mcpBroker.permissionDecisionMaxAge: must be at most 30 seconds',
    );
  });

  it('reads listTtl for 2026-07-28 lists: 30 s by default, 0 allowed, negative refused', () => {
    expect(read({ servers: [] }).listTtlMs).toBe(DEFAULT_LIST_TTL_MS);
    expect(DEFAULT_LIST_TTL_MS).toBe(30_000);
    expect(read({ servers: [], listTtl: { minutes: 2 } }).listTtlMs).toBe(120_000);
    expect(read({ servers: [], listTtl: { seconds: 0 } }).listTtlMs).toBe(0);
    expect(() => read({ servers: [], listTtl: { seconds: -1 } })).toThrow(/mcpBroker\.listTtl/);
  });

  it('reads eventStreamOpenTimeout: 5 s by default, configurable, at least 1 ms', () => {
    expect(read({ servers: [] }).eventStreamOpenTimeoutMs).toBe(5000);
    expect(read({ servers: [], eventStreamOpenTimeout: '2s' }).eventStreamOpenTimeoutMs).toBe(2000);
    expect(() => read({ servers: [], eventStreamOpenTimeout: { seconds: 0 } })).toThrow(
      /mcpBroker\.eventStreamOpenTimeout/,
    );
  });

  it('reads every duration form Backstage supports', () => {
    const config = read({
      servers: [],
      reconnect: { initialDelay: { milliseconds: 100 }, maxDelay: '2s' },
      keepAlive: 'PT1S',
      elicitationTtl: { minutes: 1 },
      toolCallTimeout: '1m',
      pollInterval: { seconds: 5 },
    });
    expect(config.reconnect).toEqual({ initialDelayMs: 100, maxDelayMs: 2000 });
    expect(config.keepAliveMs).toBe(1000);
    expect(config.elicitationTtlMs).toBe(60_000);
    expect(config.toolCallTimeoutMs).toBe(60_000);
    expect(config.pollIntervalMs).toBe(5000);
  });

  it('allows an empty tool prefix and keeps the broker’s headers', () => {
    const config = read({
      servers: [
        {
          name: 'a',
          url: 'https://a.example/mcp',
          toolPrefix: '',
          headers: { Authorization: 'Bearer x' },
        },
      ],
    });
    expect(config.servers[0].toolPrefix).toBe('');
    expect(config.servers[0].headers).toEqual({ Authorization: 'Bearer x' });
    expect(config.servers[0].nonCredentialHeaders).toBeUndefined();
  });

  it('reads the headers an admin marked as not credentials', () => {
    const config = read({
      servers: [
        {
          name: 'a',
          url: 'https://a.example/mcp',
          headers: { Authorization: 'Bearer x', 'X-Tenant': 'acme' },
          nonCredentialHeaders: ['x-tenant'],
        },
      ],
    });
    expect(config.servers[0].nonCredentialHeaders).toEqual(['x-tenant']);
  });

  it.each([
    [{ servers: [{ name: 'Bad Name', url: 'http://x/mcp' }] }, /mcpBroker\.servers\[0\]\.name/],
    [{ servers: [{ name: 'a', url: 'not a url' }] }, /mcpBroker\.servers\[0\]\.url/],
    [{ servers: [{ name: 'a', url: 'ftp://x/mcp' }] }, /mcpBroker\.servers\[0\]\.url/],
    [
      {
        servers: [
          { name: 'a', url: 'http://x/mcp' },
          { name: 'a', url: 'http://y/mcp' },
        ],
      },
      /mcpBroker\.servers\[1\]\.name.*twice/,
    ],
    [
      { servers: [{ name: 'a', url: 'http://x/mcp', headers: { 'Mcp-Session-Id': 'x' } }] },
      /mcpBroker\.servers\[0\]\.headers\.Mcp-Session-Id/,
    ],
    [{ servers: [{ url: 'http://x/mcp' }] }, /servers\[0\]\.name/],
    [
      {
        servers: [
          {
            name: 'a',
            url: 'http://x/mcp',
            headers: { Authorization: 'Bearer x' },
            nonCredentialHeaders: ['Authorization'],
          },
        ],
      },
      /mcpBroker\.servers\[0\]\.nonCredentialHeaders: Authorization is a credential/,
    ],
    [
      { servers: [{ name: 'a', url: 'http://x/mcp', nonCredentialHeaders: ['X-Tenant'] }] },
      /mcpBroker\.servers\[0\]\.nonCredentialHeaders: X-Tenant is not one of the server's headers/,
    ],
    [{ servers: [], keepAlive: 'soon' }, /mcpBroker\.keepAlive/],
    [
      { servers: [], maxRequestBodyBytes: 0 },
      /mcpBroker\.maxRequestBodyBytes: must be a positive integer/,
    ],
    [{ servers: [], requestBodyTimeout: 'later' }, /mcpBroker\.requestBodyTimeout/],
    [
      { servers: [], reconnect: { initialDelay: '10s', maxDelay: '1s' } },
      /mcpBroker\.reconnect\.maxDelay/,
    ],
    [
      { servers: [], dnsRebindingProtection: { allowedOrigins: ['http://a.example/path'] } },
      /allowedOrigins\[0\]/,
    ],
  ])('fails with a message naming the key for %j', (section, message) => {
    expect(() => read(section)).toThrow(message);
  });

  it('derives the DNS rebinding allow-lists from backend.baseUrl and app.baseUrl', () => {
    const config = read(
      { servers: [] },
      {
        backend: { baseUrl: 'https://portal.example.com' },
        app: { baseUrl: 'https://app.example.com' },
      },
    );
    expect([...config.dnsRebindingProtection.allowedHosts]).toEqual(
      expect.arrayContaining(['portal.example.com', 'localhost', '127.0.0.1']),
    );
    expect([...config.dnsRebindingProtection.allowedOrigins]).toEqual([
      'https://portal.example.com',
      'https://app.example.com',
    ]);
  });

  it('reads the session limits and the shutdown drain, with documented defaults', () => {
    expect(read({ servers: [] })).toMatchObject({
      sessionLimits: { perPrincipal: 32, perReplica: 5_000 },
      shutdownDrainTimeoutMs: 10_000,
    });
    const config = read({
      servers: [],
      sessionLimits: { perPrincipal: 4 },
      shutdownDrainTimeout: { seconds: 0 },
    });
    expect(config.sessionLimits).toEqual({ perPrincipal: 4, perReplica: 5_000 });
    expect(config.shutdownDrainTimeoutMs).toBe(0);
    expect(() => read({ servers: [], sessionLimits: { perReplica: 0 } })).toThrow(
      'Invalid mcpBroker.sessionLimits.perReplica: must be a positive integer',
    );
    expect(() => read({ servers: [], sessionLimits: { perPrincipal: 1.5 } })).toThrow(
      /mcpBroker\.sessionLimits\.perPrincipal/,
    );
  });

  it('reads the bounds of what one backend server may list, with documented defaults', () => {
    expect(read({ servers: [] }).backendLimits).toEqual({ maxListItems: 1000, maxListPages: 50 });
    expect(read({ servers: [], backendLimits: { maxListItems: 10 } }).backendLimits).toEqual({
      maxListItems: 10,
      maxListPages: 50,
    });
    expect(() => read({ servers: [], backendLimits: { maxListPages: 0 } })).toThrow(
      'Invalid mcpBroker.backendLimits.maxListPages: must be a positive integer',
    );
  });
});
