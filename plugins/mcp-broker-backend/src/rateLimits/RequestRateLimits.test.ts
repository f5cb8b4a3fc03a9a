/*
 * The rate limits of a person's requests on one replica, with Backstage's user-info service replaced by a test
 * double that names the person's groups (the real one needs the auth backend and the catalog:
 * the development backend's e2e tests use it with the fixture users).
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import type { UserInfoService } from '@backstage/backend-plugin-api';
import { ConfigReader } from '@backstage/config';
import { GROUPS_RETRY_MS } from './PrincipalGroups';
import { readRateLimitConfig } from './rateLimitConfig';
import { RequestRateLimits } from './RequestRateLimits';

const WINDOW_START = 1_800_000_000_000;

function limitsWith(rateLimits: unknown, userInfo: UserInfoService) {
  const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never))!;
  const logger = mockServices.logger.mock();
  const clock = { now: WINDOW_START + 20_000 };
  const limits = RequestRateLimits.create({
    config,
    userInfo,
    logger,
    now: () => clock.now,
  })!;
  return { limits, logger, clock };
}

/** A user-info double answering `groups` for every user, counting its questions. */
function userInfoWith(initial: string[] | Error) {
  const asked = { count: 0 };
  let groups = initial;
  const userInfo: UserInfoService & { answer(next: string[] | Error): void } = {
    answer(next) {
      groups = next;
    },
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

describe('RequestRateLimits', () => {
  const RULES = {
    overrides: [
      { server: 'expensive', calls: 1, per: '1m' },
      { server: 'expensive', group: 'group:default/bots', calls: 3, per: '1m' },
    ],
  };

  it('is not built when no entry limits anything', () => {
    const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits: {} } }))!;
    expect(
      RequestRateLimits.create({
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
      kind: 'limited',
      limit: '1 request per minute on server "expensive"',
      configuredAt: 'mcpBroker.rateLimits.overrides[0]',
      limitSource: 'config',
      error: {
        code: -32000,
        message:
          'Rate limit reached: 1 request per minute on server "expensive" for each person; retry in 40 s',
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

  it('refuses (retryable, not counted) a person whose groups cannot be read, asks again only after GROUPS_RETRY_MS, and says so', async () => {
    const { userInfo, asked } = userInfoWith(new Error('auth backend down'));
    const { limits, logger, clock } = limitsWith(RULES, userInfo);
    const unavailable = {
      kind: 'unavailable',
      retryAfterMs: GROUPS_RETRY_MS,
      error: {
        code: -32000,
        message: expect.stringMatching(/could not read your groups from Backstage; retry in 5 s$/),
        data: { reason: 'limits-unavailable', retryable: true, retryAfterMs: GROUPS_RETRY_MS },
      },
    };
    expect(await limits.admit(callBy('robo'))).toMatchObject(unavailable);
    // Within the retry interval nobody is asked: the refusal names the time left.
    clock.now += 2_000;
    expect(await limits.admit(callBy('ann'))).toMatchObject({
      kind: 'unavailable',
      retryAfterMs: GROUPS_RETRY_MS - 2_000,
    });
    expect(asked.count).toBe(1);
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('could not read the groups'));
    // Once the user info answers again, robo is counted under his real limits (nothing was
    // counted while refused: his one call per minute is still there).
    clock.now += GROUPS_RETRY_MS;
    userInfo.answer([]);
    expect(await limits.admit(callBy('robo'))).toBeUndefined();
    expect(await limits.admit(callBy('robo'))).toMatchObject({ kind: 'limited' });
    expect(asked.count).toBe(2);
    limits.close();
  });

  it('counts every limited method in a scope without a tool glob, and tool calls only in one with a glob', async () => {
    const { limits } = limitsWith(
      {
        overrides: [
          { server: 'expensive', calls: 2, per: '1m' },
          { server: 'cheap', tool: 'search_*', calls: 1, per: '1m' },
        ],
      },
      userInfoWith([]).userInfo,
    );
    const prompt = { ...callBy('alice'), tool: undefined };
    expect(await limits.admit(prompt)).toBeUndefined();
    expect(await limits.admit(callBy('alice'))).toBeUndefined();
    // A prompt and a tool call used the two units of "expensive".
    expect(await limits.admit(prompt)).toMatchObject({
      kind: 'limited',
      limit: '2 requests per minute on server "expensive"',
    });
    // A resource read on "cheap" is not counted by its tool-glob entry.
    const read = { ...callBy('alice', 'cheap'), tool: undefined };
    for (let i = 0; i < 3; i += 1) expect(await limits.admit(read)).toBeUndefined();
    limits.close();
  });

  it('counts the methods mcpBroker.rateLimits.methods names (all limited methods by default), and says "tool calls" when only those are counted', async () => {
    const userInfo = userInfoWith([]).userInfo;
    const all = limitsWith(RULES, userInfo).limits;
    expect(
      ['tools/call', 'prompts/get', 'resources/read', 'completion/complete'].map(m =>
        all.counts(m),
      ),
    ).toEqual([true, true, true, true]);
    const toolsOnly = limitsWith({ ...RULES, methods: ['tools/call'] }, userInfo).limits;
    expect(toolsOnly.counts('tools/call')).toBe(true);
    expect(toolsOnly.counts('prompts/get')).toBe(false);
    await toolsOnly.admit(callBy('alice'));
    expect(await toolsOnly.admit(callBy('alice'))).toMatchObject({
      limit: '1 tool call per minute on server "expensive"',
    });
    all.close();
    toolsOnly.close();
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
