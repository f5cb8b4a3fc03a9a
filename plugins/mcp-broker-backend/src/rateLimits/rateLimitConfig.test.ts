import { ConfigReader } from '@backstage/config';
import { normalizeEntityRef, readRateLimitConfig } from './rateLimitConfig';

const read = (rateLimits: unknown) =>
  readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never));

describe('readRateLimitConfig', () => {
  it('is undefined without the section (no limits)', () => {
    expect(readRateLimitConfig(new ConfigReader({ mcpBroker: {} }))).toBeUndefined();
  });

  it('reads methods when given (undefined: every limited method of the method table)', () => {
    const limit = { default: { calls: 1, per: '1m' } };
    expect(read(limit)?.methods).toBeUndefined();
    expect(read({ ...limit, methods: ['tools/call', 'prompts/get'] })?.methods).toEqual([
      'tools/call',
      'prompts/get',
    ]);
  });

  it('reads the default and overrides of every kind, with windows in milliseconds', () => {
    const config = read({
      default: { calls: 600, per: { minutes: 1 } },
      overrides: [
        { server: 'expensive', calls: 20, per: '1m' },
        { server: 'expensive', tool: 'search_*', calls: 5, per: { seconds: 30 } },
        { group: 'bots', server: 'expensive', calls: 100, per: { hours: 1 } },
        { user: 'user:default/Carol', unlimited: true },
        { user: 'service:ci-agent', calls: 10, per: '1s' },
        { server: 'expensive', tool: '*', user: 'alice', calls: 1, per: '1m' },
      ],
    });
    expect(config?.rules.map(({ id, ...rule }) => rule)).toEqual([
      {
        at: 'mcpBroker.rateLimits.default',
        subject: { kind: 'everyone' },
        limit: { calls: 600, windowMs: 60_000 },
      },
      {
        at: 'mcpBroker.rateLimits.overrides[0]',
        server: 'expensive',
        subject: { kind: 'everyone' },
        limit: { calls: 20, windowMs: 60_000 },
      },
      {
        at: 'mcpBroker.rateLimits.overrides[1]',
        server: 'expensive',
        tool: 'search_*',
        subject: { kind: 'everyone' },
        limit: { calls: 5, windowMs: 30_000 },
      },
      {
        at: 'mcpBroker.rateLimits.overrides[2]',
        server: 'expensive',
        subject: { kind: 'group', ref: 'group:default/bots' },
        limit: { calls: 100, windowMs: 3_600_000 },
      },
      {
        at: 'mcpBroker.rateLimits.overrides[3]',
        subject: { kind: 'user', ref: 'user:default/carol' },
        limit: 'unlimited',
      },
      {
        at: 'mcpBroker.rateLimits.overrides[4]',
        subject: { kind: 'user', ref: 'service:ci-agent' },
        limit: { calls: 10, windowMs: 1000 },
      },
      {
        // `tool: "*"` is every tool: the same scope as no tool at all.
        at: 'mcpBroker.rateLimits.overrides[5]',
        server: 'expensive',
        subject: { kind: 'user', ref: 'user:default/alice' },
        limit: { calls: 1, windowMs: 60_000 },
      },
    ]);
  });

  it('gives every entry an id that depends on what it limits, not where it is listed', () => {
    const a = read({
      overrides: [
        { server: 'x', calls: 1, per: '1m' },
        { server: 'y', calls: 1, per: '1m' },
      ],
    });
    const b = read({
      overrides: [
        { server: 'y', calls: 1, per: '1m' },
        { server: 'x', calls: 1, per: '1m' },
      ],
    });
    const c = read({ overrides: [{ server: 'x', calls: 2, per: '1m' }] });
    expect(a!.rules[0].id).toBe(b!.rules[1].id);
    expect(a!.rules[0].id).not.toBe(a!.rules[1].id);
    expect(c!.rules[0].id).not.toBe(a!.rules[0].id);
  });

  it.each([
    [
      { default: { calls: 0, per: '1m' } },
      'mcpBroker.rateLimits.default.calls: must be a positive integer',
    ],
    [
      { default: { calls: 1.5, per: '1m' } },
      'mcpBroker.rateLimits.default.calls: must be a positive integer',
    ],
    [{ default: { calls: 5 } }, 'mcpBroker.rateLimits.default: give calls and per'],
    [
      { default: { calls: 5, per: { milliseconds: 10 } } },
      'mcpBroker.rateLimits.default.per: must be at least 1000 ms',
    ],
    [
      { default: { calls: 5, per: 'soon' } },
      'Invalid duration at mcpBroker.rateLimits.default.per',
    ],
    [
      { default: { server: 'x', calls: 5, per: '1m' } },
      'mcpBroker.rateLimits.default.server: the default is for everyone',
    ],
    [
      { overrides: [{ calls: 5, per: '1m' }] },
      'overrides[0]: an override names a server, tool, user or group',
    ],
    [
      { overrides: [{ server: 'Bad_Name', calls: 5, per: '1m' }] },
      'overrides[0].server "Bad_Name": not a server name',
    ],
    [
      { overrides: [{ user: 'alice', group: 'bots', calls: 5, per: '1m' }] },
      'give either user or group',
    ],
    [
      { overrides: [{ user: 'group:default/bots', calls: 5, per: '1m' }] },
      'overrides[0].user "group:default/bots"',
    ],
    [
      { overrides: [{ group: 'user:default/alice', calls: 5, per: '1m' }] },
      'overrides[0].group "user:default/alice"',
    ],
    [
      { overrides: [{ user: 'alice', unlimited: true, calls: 5 }] },
      'unlimited: true takes no calls or per',
    ],
    [
      { overrides: [{ server: 'x', tool: '', calls: 5, per: '1m' }] },
      "key 'mcpBroker.rateLimits.overrides[0].tool'",
    ],
    [
      {
        overrides: [
          { server: 'x', calls: 5, per: '1m' },
          { server: 'x', calls: 9, per: '1h' },
        ],
      },
      'overrides[1]: same server, tool and user/group as mcpBroker.rateLimits.overrides[0]',
    ],
    [{ methods: [], default: { calls: 1, per: '1m' } }, 'methods: name at least one method'],
    [
      { methods: ['tools/call', 'tools/call'], default: { calls: 1, per: '1m' } },
      'methods: a method is named twice',
    ],
  ])('refuses %j, naming the key', (rateLimits, message) => {
    expect(() => read(rateLimits)).toThrow(message);
  });
});

describe('normalizeEntityRef', () => {
  it.each([
    ['alice', 'user', 'user:default/alice'],
    ['user:Alice', 'user', 'user:default/alice'],
    ['team-a/alice', 'user', 'user:team-a/alice'],
    ['group:default/Payments-Team', 'group', 'group:default/payments-team'],
    ['group:default/x', 'user', undefined],
    ['a:b:c', 'user', undefined],
  ])('%s as a %s ref is %s', (value, kind, expected) => {
    expect(normalizeEntityRef(value, kind)).toBe(expected);
  });
});
