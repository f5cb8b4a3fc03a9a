import { ConfigReader } from '@backstage/config';
import { readRateLimitConfig } from './rateLimitConfig';
import {
  describeLimit,
  describeWindow,
  RateLimitRules,
  type RateLimitedPerson,
} from './RateLimitRules';

const rulesOf = (rateLimits: unknown) =>
  RateLimitRules.of(readRateLimitConfig(new ConfigReader({ mcpBroker: { rateLimits } } as never))!);

const RULES = {
  default: { calls: 600, per: '1m' },
  overrides: [
    { server: 'expensive', calls: 20, per: '1m' },
    { server: 'expensive', tool: 'search_*', calls: 5, per: '1m' },
    { server: 'expensive', group: 'group:default/bots', calls: 100, per: '1m' },
    { server: 'expensive', group: 'group:default/interns', calls: 2, per: '1m' },
    { server: 'expensive', user: 'user:default/dave', calls: 1000, per: '1m' },
    { user: 'user:default/carol', unlimited: true },
  ],
};

const alice: RateLimitedPerson = { principal: 'user:user:default/alice', groups: [] };
const calls = (rules: RateLimitRules, person: RateLimitedPerson, server: string, tool: string) =>
  rules
    .limitsFor(person, { server, tool })
    .map(applied => applied.rule.at.replace('mcpBroker.rateLimits.', ''));

describe('RateLimitRules', () => {
  const rules = rulesOf(RULES);

  it('applies every scope that matches the call: the default, the server, the tool glob', () => {
    expect(calls(rules, alice, 'cheap', 'echo')).toEqual(['default']);
    expect(calls(rules, alice, 'expensive', 'echo')).toEqual(['default', 'overrides[0]']);
    expect(calls(rules, alice, 'expensive', 'search_docs')).toEqual([
      'default',
      'overrides[0]',
      'overrides[1]',
    ]);
    // The glob is on the backend's own tool name, case-sensitive, * only.
    expect(calls(rules, alice, 'expensive', 'Search_docs')).toEqual(['default', 'overrides[0]']);
  });

  it("picks a scope's user entry over its group entries, the first listed group over later ones, and either over everyone's", () => {
    const bot = {
      principal: 'user:user:default/robo',
      groups: ['group:default/bots', 'group:default/interns'],
    };
    const intern = { principal: 'user:user:default/ivy', groups: ['group:default/interns'] };
    const dave = { principal: 'user:user:default/dave', groups: ['group:default/interns'] };
    expect(calls(rules, bot, 'expensive', 'echo')).toEqual(['default', 'overrides[2]']);
    expect(calls(rules, intern, 'expensive', 'echo')).toEqual(['default', 'overrides[3]']);
    expect(calls(rules, dave, 'expensive', 'echo')).toEqual(['default', 'overrides[4]']);
    // Entity refs compare without case (the principal keeps Backstage's spelling).
    expect(
      calls(rules, { principal: 'user:user:default/Dave', groups: [] }, 'expensive', 'x'),
    ).toEqual(['default', 'overrides[4]']);
  });

  it('lifts a scope for an unlimited person, and leaves the other scopes in force', () => {
    const carol = { principal: 'user:user:default/carol', groups: [] };
    expect(calls(rules, carol, 'cheap', 'echo')).toEqual([]);
    expect(calls(rules, carol, 'expensive', 'echo')).toEqual(['overrides[0]']);
  });

  it('counts each (entry, person) apart: budgets differ per person and per entry', () => {
    const bob = { principal: 'user:user:default/bob', groups: [] };
    const [aliceDefault, aliceServer] = rules.limitsFor(alice, { server: 'expensive', tool: 'x' });
    const [bobDefault] = rules.limitsFor(bob, { server: 'expensive', tool: 'x' });
    expect(new Set([aliceDefault.budget, aliceServer.budget, bobDefault.budget]).size).toBe(3);
    expect(aliceDefault.budget).toBe(
      rules.limitsFor(alice, { server: 'cheap', tool: 'y' })[0].budget,
    );
  });

  it('needs groups only when an entry names one', () => {
    expect(rules.needsGroups).toBe(true);
    expect(rulesOf({ default: { calls: 1, per: '1s' } }).needsGroups).toBe(false);
  });

  it('describes a limit in words a refusal can use', () => {
    const [, , tool] = rules.limitsFor(alice, { server: 'expensive', tool: 'search_x' });
    expect(describeLimit(tool.rule, tool.limit)).toBe(
      '5 tool calls per minute on server "expensive" (tools "search_*")',
    );
    expect(describeWindow(30_000)).toBe('30 seconds');
    expect(describeWindow(7_200_000)).toBe('2 hours');
    expect(describeWindow(1500)).toBe('1500 ms');
  });
});
