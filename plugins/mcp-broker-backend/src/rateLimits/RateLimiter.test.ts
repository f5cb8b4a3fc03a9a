/*
 * The limiter on one replica (no shared store): exact counts per (entry, person) and fixed
 * window. The shared-store behaviour (leases, two replicas, a lost database) is tested on SQLite
 * and PostgreSQL in src/store/rateLimits.test.ts.
 */
import { ConfigReader } from '@backstage/config';
import { mockServices } from '@backstage/backend-test-utils';
import { readRateLimitConfig } from './rateLimitConfig';
import { RateLimitRules } from './RateLimitRules';
import { RateLimiter, type Admission } from './RateLimiter';

const WINDOW_START = 1_800_000_000_000; // a multiple of a minute
const alice = { principal: 'user:user:default/alice', groups: [] };
const bob = { principal: 'user:user:default/bob', groups: [] };

function limiterWith(rateLimits: unknown, clock: { now: number }) {
  const config = readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never))!;
  return RateLimiter.create({
    rules: RateLimitRules.of(config),
    logger: mockServices.logger.mock(),
    now: () => clock.now,
  });
}

async function admitted(limiter: RateLimiter, person: typeof alice, server: string, n: number) {
  const results: Admission[] = [];
  for (let i = 0; i < n; i += 1)
    results.push(await limiter.admit(person, { server, tool: 'echo' }));
  return results.filter(r => r.admitted).length;
}

describe('RateLimiter (one replica)', () => {
  const clock = { now: WINDOW_START + 15_000 };
  let limiter: RateLimiter;

  afterEach(() => limiter.close());

  it('admits N calls per window per person, refuses the next with the time to the window end, and starts over in the next window', async () => {
    limiter = limiterWith({ default: { calls: 3, per: '1m' } }, clock);
    expect(await admitted(limiter, alice, 's', 3)).toBe(3);
    const refused = await limiter.admit(alice, { server: 's', tool: 'echo' });
    expect(refused).toMatchObject({ admitted: false, retryAfterMs: 45_000 });
    // Bob has his own budget.
    expect(await admitted(limiter, bob, 's', 3)).toBe(3);

    clock.now = WINDOW_START + 60_000;
    expect(await admitted(limiter, alice, 's', 4)).toBe(3);
  });

  it('needs every budget that holds: a spent server budget refuses that server only, and a refused call spends nothing', async () => {
    clock.now = WINDOW_START + 1_000;
    limiter = limiterWith(
      {
        default: { calls: 5, per: '1m' },
        overrides: [{ server: 'expensive', calls: 2, per: '10s' }],
      },
      clock,
    );
    expect(await admitted(limiter, alice, 'expensive', 4)).toBe(2);
    const refusal = await limiter.admit(alice, { server: 'expensive', tool: 'echo' });
    expect(refusal).toMatchObject({ admitted: false, retryAfterMs: 9_000 });
    expect(refusal.admitted === false && refusal.limit.rule.server).toBe('expensive');
    // The refused calls did not count against the default: three calls are left elsewhere.
    expect(await admitted(limiter, alice, 'cheap', 5)).toBe(3);
    // Both spent: the refusal asks to wait for the later of the two windows.
    const both = await limiter.admit(alice, { server: 'expensive', tool: 'echo' });
    expect(both).toMatchObject({ admitted: false, retryAfterMs: 59_000 });
  });

  it('admits everything when no entry holds (unlimited person, no default)', async () => {
    limiter = limiterWith(
      {
        overrides: [
          { server: 'expensive', calls: 1, per: '1m' },
          { server: 'expensive', user: 'alice', unlimited: true },
        ],
      },
      clock,
    );
    expect(await admitted(limiter, alice, 'expensive', 10)).toBe(10);
    expect(await admitted(limiter, bob, 'expensive', 10)).toBe(1);
    expect(await admitted(limiter, bob, 'cheap', 10)).toBe(10);
  });
});
