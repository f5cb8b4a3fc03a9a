/*
 * The rate-limit step on one replica, with Backstage's user-info service replaced by a test
 * double that names the person's groups (the real one needs the auth backend and the catalog:
 * the development backend's e2e tests use it with the fixture users).
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import type { UserInfoService } from '@backstage/backend-plugin-api';
import { ConfigReader } from '@backstage/config';
import { readRateLimitConfig } from './rateLimitConfig';
import { ToolCallRateLimits } from './ToolCallRateLimits';

const WINDOW_START = 1_800_000_000_000;

function limitsWith(rateLimits: unknown, userInfo: UserInfoService) {
  const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never))!;
  const logger = mockServices.logger.mock();
  const limits = ToolCallRateLimits.create({
    config,
    userInfo,
    logger,
    now: () => WINDOW_START + 20_000,
  })!;
  return { limits, logger };
}

/** A user-info double answering `groups` for every user, counting its questions. */
function userInfoWith(groups: string[] | Error) {
  const asked = { count: 0 };
  const userInfo: UserInfoService = {
    async getUserInfo(credentials) {
      asked.count += 1;
      if (groups instanceof Error) throw groups;
      const ref = (credentials.principal as { userEntityRef: string }).userEntityRef;
      return { userEntityRef: ref, ownershipEntityRefs: [ref, ...groups] };
    },
  };
  return { userInfo, asked };
}

const callBy = (name: string, server = 'expensive') => ({
  principal: `user:user:default/${name}`,
  credentials: async () => mockCredentials.user(`user:default/${name}`),
  server,
  tool: 'search',
});

describe('ToolCallRateLimits', () => {
  const RULES = {
    overrides: [
      { server: 'expensive', calls: 1, per: '1m' },
      { server: 'expensive', group: 'group:default/bots', calls: 3, per: '1m' },
    ],
  };

  it('is not built when no entry limits anything', () => {
    const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits: {} } }))!;
    expect(
      ToolCallRateLimits.create({
        config,
        userInfo: mockServices.userInfo(),
        logger: mockServices.logger.mock(),
      }),
    ).toBeUndefined();
  });

  it('refuses with -32000, data { reason: "rate-limited", retryAfterMs } and a message naming the limit', async () => {
    const { limits } = limitsWith(RULES, userInfoWith([]).userInfo);
    expect(await limits.admit(callBy('alice'))).toBeUndefined();
    expect(await limits.admit(callBy('alice'))).toEqual({
      retryAfterMs: 40_000,
      limit: '1 tool call per minute on server "expensive"',
      configuredAt: 'mcpBroker.rateLimits.overrides[0]',
      error: {
        code: -32000,
        message:
          'Rate limit reached: 1 tool call per minute on server "expensive" for each person; retry in 40 s',
        data: { reason: 'rate-limited', retryAfterMs: 40_000 },
      },
    });
    // Other servers are not limited by this entry.
    expect(await limits.admit(callBy('alice', 'cheap'))).toBeUndefined();
    limits.close();
  });

  it("gives a group's members the group's limit, asking for a person's groups once", async () => {
    const { userInfo, asked } = userInfoWith(['group:default/Bots']);
    const { limits } = limitsWith(RULES, userInfo);
    const refusals = [];
    for (let i = 0; i < 4; i += 1) refusals.push(await limits.admit(callBy('robo')));
    expect(refusals.map(r => r === undefined)).toEqual([true, true, true, false]);
    expect(asked.count).toBe(1);
    limits.close();
  });

  it('counts a person whose groups cannot be read under the limits for everyone, and says so', async () => {
    const { limits, logger } = limitsWith(
      RULES,
      userInfoWith(new Error('auth backend down')).userInfo,
    );
    expect(await limits.admit(callBy('robo'))).toBeUndefined();
    expect(await limits.admit(callBy('robo'))).toBeDefined();
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('could not read the groups'));
    limits.close();
  });

  it('never asks about the groups of a service principal', async () => {
    const { userInfo, asked } = userInfoWith(['group:default/bots']);
    const { limits } = limitsWith(RULES, userInfo);
    const service = { ...callBy('x'), principal: 'service:ci-agent' };
    expect(await limits.admit(service)).toBeUndefined();
    expect(await limits.admit(service)).toBeDefined();
    expect(asked.count).toBe(0);
    limits.close();
  });
});
