/*
 * Plans as rate limits (docs/contracts/mcp-access.md §6.4) on one replica: a person's access
 * grants come from a plain lookup here (the grant index and its feed are tested in
 * store/grantIndex.test.ts; the whole flow in packages/backend's mcpAccessFlow e2e test).
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import type { StoredAccessGrant } from '../grants/AccessGrantStore';
import { testGrant } from '../grants/__testUtils__/testGrant';
import { readRateLimitConfig } from './rateLimitConfig';
import { RequestRateLimits } from './RequestRateLimits';

const WINDOW_START = 1_800_000_000_000;
const DAY = 86_400_000;

const stored = (overrides: Partial<StoredAccessGrant>): StoredAccessGrant => ({
  ...testGrant(overrides),
  id: `portal:${overrides.id ?? Math.random().toString(36).slice(2)}`,
  group: 'portal:default/example-tools',
  revision: 1,
});

function limitsWith(grants: StoredAccessGrant[], rateLimits?: unknown) {
  const clock = { now: WINDOW_START + 20_000 };
  const limits = RequestRateLimits.create({
    config:
      rateLimits === undefined
        ? undefined
        : readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never)),
    grants: { grantsOf: subject => grants.filter(g => g.subject === subject) },
    userInfo: mockServices.userInfo(),
    logger: mockServices.logger.mock(),
    now: () => clock.now,
  })!;
  return { limits, clock };
}

const call = (tool: string | undefined, server = 'example', user = 'alice') => ({
  principal: `user:user:default/${user}`,
  credentials: async () => {
    throw new Error('no group look-up expected');
  },
  server,
  ...(tool === undefined ? {} : { tool }),
});

describe('RequestRateLimits with plans', () => {
  it("is built for grants alone, and limits a person by their plan on the grant's server only", async () => {
    const { limits } = limitsWith([
      stored({
        id: 'bronze-1',
        plan: 'bronze',
        title: 'Example tools',
        limits: [{ calls: 2, windowMs: DAY }],
      }),
    ]);
    // Admitted under the grant, which the call's audit event then names.
    const underBronze = { kind: 'admitted', grant: 'portal:bronze-1' };
    expect(await limits.admit(call('echo'))).toEqual(underBronze);
    expect(await limits.admit(call('add_tool'))).toEqual(underBronze);
    const refusal = await limits.admit(call('echo'));
    expect(refusal).toMatchObject({
      kind: 'limited',
      limitSource: 'plan',
      grant: 'portal:bronze-1',
      limit:
        'your plan "bronze" of Example tools allows 2 tool calls per day (UTC) on server "example"',
      error: {
        code: -32000,
        message: expect.stringMatching(
          /^Rate limit reached: your plan "bronze" of Example tools allows 2 tool calls per day \(UTC\) on server "example"; retry in \d+ s$/,
        ),
        data: {
          reason: 'rate-limited',
          limitSource: 'plan',
          retryAfterMs: DAY - ((WINDOW_START + 20_000) % DAY), // the end of the UTC day
        },
      },
    });
    // Another server, and another person, are not limited by alice's plan.
    expect(await limits.admit(call('echo', 'other'))).toBeUndefined();
    expect(await limits.admit(call('echo', 'example', 'bob'))).toBeUndefined();
    limits.close();
  });

  it('counts a quota with tools on those tools only, and tries a second grant when the first has no room', async () => {
    const { limits } = limitsWith([
      stored({
        id: 'bronze',
        approvedAt: 1,
        plan: 'bronze',
        limits: [{ calls: 1, windowMs: 60_000, tools: ['deploy*'] }],
      }),
      stored({
        id: 'gold',
        approvedAt: 2,
        group: 'x',
        plan: 'gold',
        limits: [{ calls: 2, windowMs: 60_000 }],
      }),
    ]);
    const under = (grant: string) => ({ kind: 'admitted', grant: `portal:${grant}` });
    // echo: bronze has no quota for it (always room): admitted under bronze, gold untouched.
    for (let i = 0; i < 3; i += 1)
      expect(await limits.admit(call('echo'))).toEqual(under('bronze'));
    // deploy: bronze's 1, then gold's 2, then refused naming the earliest retry.
    expect(await limits.admit(call('deploy'))).toEqual(under('bronze'));
    for (let i = 0; i < 2; i += 1)
      expect(await limits.admit(call('deploy'))).toEqual(under('gold'));
    expect(await limits.admit(call('deploy'))).toMatchObject({
      kind: 'limited',
      limitSource: 'plan',
      grant: expect.stringMatching(/^portal:(bronze|gold)$/),
    });
    limits.close();
  });

  it('refuses on a configured limit whatever the plan says, and counts nothing then', async () => {
    const { limits } = limitsWith([stored({ limits: [{ calls: 5, windowMs: 60_000 }] })], {
      overrides: [{ server: 'example', calls: 1, per: '1m' }],
    });
    expect(await limits.admit(call('echo'))).toMatchObject({ kind: 'admitted' });
    const refusal = await limits.admit(call('echo'));
    expect(refusal).toMatchObject({
      limitSource: 'config',
      configuredAt: 'mcpBroker.rateLimits.overrides[0]',
    });
    expect(refusal).not.toHaveProperty('grant');
    limits.close();
  });

  it('lets a plan without quotas limit nothing, and service principals past plans', async () => {
    const { limits } = limitsWith([stored({ id: 'free', limits: [] })]);
    for (let i = 0; i < 5; i += 1) {
      expect(await limits.admit(call('echo'))).toEqual({ kind: 'admitted', grant: 'portal:free' });
    }
    expect(await limits.admit({ ...call('echo'), principal: 'service:ci-agent' })).toBeUndefined();
    limits.close();
  });
});
