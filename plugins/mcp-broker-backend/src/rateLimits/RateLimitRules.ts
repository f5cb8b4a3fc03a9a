/*
 * Which of the configured limits hold for one person's request to a server (a tool call, or
 * another method that reaches a backend on their behalf: `mcpBroker.rateLimits.methods`).
 *
 * Entries with the same scope (server, tool glob) are alternatives for different people: of
 * those, a person gets the entry that names them as `user`, else the first (in configuration
 * order) that names one of their groups, else the scope's entry for everyone, else none. Entries
 * of different scopes all hold at once: a call to `expensive` counts against the person's
 * `default` budget and against their `expensive` budget, and is refused when either is spent.
 * An `unlimited` entry chosen for a person lifts its scope's limit for them.
 *
 * An entry with a `tool` glob counts tool calls only; an entry without one counts every limited
 * request in its scope together (a prompt, a resource read and a tool call each use one unit).
 *
 * Each (entry, person) has its own budget; its key is what RateLimiter counts under.
 */
import { globMatcher } from '../permissions/rules';
import type { RateLimit, RateLimitConfig, RateLimitRule } from './rateLimitConfig';

/** Whose call it is: the principal and, when some entry names groups, their groups. */
export interface RateLimitedPerson {
  /** The broker's principal string: `user:<entity ref>` or `service:<subject>`. */
  readonly principal: string;
  /** The person's group refs (`group:<namespace>/<name>`, lower case); empty if unknown. */
  readonly groups: readonly string[];
}

/**
 * What the request is: the configured server and, for a tool call, the backend's own tool name
 * (undefined for the other methods, which only entries without a `tool` glob count).
 */
export interface RateLimitedCall {
  readonly server: string;
  readonly tool?: string;
}

/** A limit that holds for one call, and the budget it counts against. */
export interface AppliedLimit {
  readonly rule: RateLimitRule;
  readonly limit: RateLimit;
  /** The (entry, person) budget's key: the same on every replica. */
  readonly budget: string;
}

interface Scope {
  readonly server?: string;
  /** undefined: the scope has no tool glob (every limited request counts). */
  readonly matchesTool?: (tool: string) => boolean;
  readonly users: Map<string, RateLimitRule>;
  readonly groups: RateLimitRule[];
  everyone?: RateLimitRule;
}

/** The subject ref of a principal: `user:<ref>` (lower case) or `service:<subject>`. */
export function subjectOfPrincipal(principal: string): string {
  return principal.startsWith('user:') ? principal.slice('user:'.length).toLowerCase() : principal;
}

/** The configured entries, arranged for matching; see the file comment. */
export class RateLimitRules {
  readonly #scopes: Scope[];
  /** True when some entry names a group (then a person's groups must be known). */
  readonly needsGroups: boolean;

  static of(config: RateLimitConfig): RateLimitRules {
    return new RateLimitRules(config.rules);
  }

  private constructor(rules: readonly RateLimitRule[]) {
    const byScope = new Map<string, Scope>();
    for (const rule of rules) {
      const key = JSON.stringify([rule.server, rule.tool]);
      let scope = byScope.get(key);
      if (scope === undefined) {
        const glob = rule.tool === undefined ? undefined : globMatcher([rule.tool]);
        scope = {
          ...(rule.server === undefined ? {} : { server: rule.server }),
          ...(glob === undefined ? {} : { matchesTool: glob }),
          users: new Map(),
          groups: [],
        };
        byScope.set(key, scope);
      }
      const { subject } = rule;
      if (subject.kind === 'user') scope.users.set(subject.ref, rule);
      else if (subject.kind === 'group') scope.groups.push(rule);
      else scope.everyone = rule;
    }
    this.#scopes = [...byScope.values()];
    this.needsGroups = this.#scopes.some(scope => scope.groups.length > 0);
  }

  /** True when no entry limits anyone (nothing to count). */
  get empty(): boolean {
    return this.#scopes.length === 0;
  }

  /** The limits that hold for `person`'s `call` (none: not limited). */
  limitsFor(person: RateLimitedPerson, call: RateLimitedCall): AppliedLimit[] {
    const applied: AppliedLimit[] = [];
    let subject: string | undefined;
    for (const scope of this.#scopes) {
      if (scope.server !== undefined && scope.server !== call.server) continue;
      if (
        scope.matchesTool !== undefined &&
        (call.tool === undefined || !scope.matchesTool(call.tool))
      ) {
        continue;
      }
      subject ??= subjectOfPrincipal(person.principal);
      const rule =
        scope.users.get(subject) ??
        scope.groups.find(
          g => g.subject.kind === 'group' && person.groups.includes(g.subject.ref),
        ) ??
        scope.everyone;
      if (rule === undefined || rule.limit === 'unlimited') continue;
      applied.push({ rule, limit: rule.limit, budget: `${rule.id}:${person.principal}` });
    }
    return applied;
  }
}

/**
 * The words a refusal uses for a limit: "5 tool calls per minute on server "x" (tools
 * "search_*")" for an entry that counts tool calls only (a `tool` glob, or `toolCallsOnly`: no
 * other method is limited), else "5 requests per minute …".
 */
export function describeLimit(
  rule: RateLimitRule,
  limit: RateLimit,
  toolCallsOnly: boolean = false,
): string {
  const where = [
    rule.server === undefined ? undefined : `on server "${rule.server}"`,
    rule.tool === undefined ? undefined : `(tools "${rule.tool}")`,
  ].filter(Boolean);
  const unit = rule.tool !== undefined || toolCallsOnly ? 'tool call' : 'request';
  const calls = `${limit.calls} ${unit}${limit.calls === 1 ? '' : 's'}`;
  return [`${calls} per ${describeWindow(limit.windowMs)}`, ...where].join(' ');
}

const UNITS: ReadonlyArray<[number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/** `minute`, `30 seconds`, `2 hours` … */
export function describeWindow(windowMs: number): string {
  for (const [size, unit] of UNITS) {
    if (windowMs % size === 0) {
      const count = windowMs / size;
      return count === 1 ? unit : `${count} ${unit}s`;
    }
  }
  return `${windowMs} ms`;
}
