/*
 * `mcpBroker.rateLimits`: how many requests a person may send to servers, read once at start-up
 * into rules. Every problem is an InputError naming the key, so a bad entry fails start-up.
 *
 *   rateLimits:
 *     methods: [tools/call, prompts/get]                 # default: every method the method table
 *                                                        # marks `limited` (all four that reach a
 *                                                        # backend on a person's behalf)
 *     default: { calls: 600, per: { minutes: 1 } }      # every person, all tool calls together
 *     overrides:
 *       - server: expensive                              # that server's tools, per person
 *         calls: 20
 *         per: { minutes: 1 }
 *       - { server: expensive, tool: 'search_*', calls: 5, per: '1m' }   # a tool glob
 *       - { group: 'group:default/bots', server: expensive, calls: 100, per: '1m' }
 *       - { user: 'user:default/carol', unlimited: true }
 *
 * An entry's scope is its `server` and `tool` (a glob of the backend's own tool name, `*`
 * matching any run of characters, as in the permission rule HAS_NAME); absent means any. Its
 * subject is one `user` or one `group` (entity refs; `service:<subject>` names a static-token
 * service as `user`), or everyone when neither is given; `default` is the everyone entry of the
 * widest scope. How the entries combine is RateLimitRules' business.
 */
import { createHash } from 'node:crypto';
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { readOptionalDurationMs } from '../config';

/** Who an entry is for. */
export type RateLimitSubject =
  | { readonly kind: 'everyone' }
  /** `user:<namespace>/<name>` (lower case) or `service:<subject>`. */
  | { readonly kind: 'user'; readonly ref: string }
  /** `group:<namespace>/<name>` (lower case). */
  | { readonly kind: 'group'; readonly ref: string };

/** At most `calls` requests (tool calls, or the limited methods) per window of `windowMs`. */
export interface RateLimit {
  readonly calls: number;
  readonly windowMs: number;
}

/** One entry of `mcpBroker.rateLimits`. */
export interface RateLimitRule {
  /**
   * Identifies the entry's counters on every replica: a digest of its scope, subject and limit
   * (replicas with the same configuration agree on it; a changed limit starts fresh counters).
   */
  readonly id: string;
  /** Where it is configured (`mcpBroker.rateLimits.overrides[2]`), for messages. */
  readonly at: string;
  /** The configured server it is limited to; undefined: every server. */
  readonly server?: string;
  /** Glob of the backend's own tool name; undefined: every tool. */
  readonly tool?: string;
  readonly subject: RateLimitSubject;
  /** The limit, or `unlimited` (the subject is exempt from this scope's limit). */
  readonly limit: RateLimit | 'unlimited';
}

/** `mcpBroker.rateLimits` as read: its rules, `default` first when configured. */
export interface RateLimitConfig {
  readonly rules: readonly RateLimitRule[];
  /**
   * `methods`: the MCP methods counted (each must be one the method table marks `limited`; the
   * router checks at start-up); undefined: every such method.
   */
  readonly methods?: readonly string[];
}

/** Shortest window: the lease machinery works in whole seconds at least. */
export const MIN_RATE_LIMIT_WINDOW_MS = 1000;

const SERVER_NAME = /^[a-z0-9-]+$/;
/** `kind:namespace/name`, `kind:name`, `namespace/name` or `name`. */
const ENTITY_REF = /^(?:([a-z0-9-]+):)?(?:([^:/\s]+)\/)?([^:/\s]+)$/i;

/**
 * The entity ref `value` names, as `kind:namespace/name` in lower case (Backstage compares refs
 * without case), with `defaultKind` and the `default` namespace filled in; undefined when it is
 * not one or its kind is another.
 */
export function normalizeEntityRef(value: string, defaultKind: string): string | undefined {
  const match = ENTITY_REF.exec(value.trim());
  if (!match) return undefined;
  const [, kind = defaultKind, namespace = 'default', name] = match;
  if (kind.toLowerCase() !== defaultKind) return undefined;
  return `${defaultKind}:${namespace}/${name}`.toLowerCase();
}

function readSubject(entry: Config, at: string): RateLimitSubject {
  const user = entry.getOptionalString('user');
  const group = entry.getOptionalString('group');
  if (user !== undefined && group !== undefined) {
    throw new InputError(`Invalid ${at}: give either user or group, not both (use two entries)`);
  }
  if (user !== undefined) {
    if (user.startsWith('service:') && user.length > 'service:'.length) {
      return { kind: 'user', ref: user };
    }
    const ref = normalizeEntityRef(user, 'user');
    if (ref === undefined) {
      throw new InputError(
        `Invalid ${at}.user "${user.slice(0, 100)}": use a user entity ref such as user:default/alice, or service:<subject> for a static-token service`,
      );
    }
    return { kind: 'user', ref };
  }
  if (group !== undefined) {
    const ref = normalizeEntityRef(group, 'group');
    if (ref === undefined) {
      throw new InputError(
        `Invalid ${at}.group "${group.slice(0, 100)}": use a group entity ref such as group:default/payments-team`,
      );
    }
    return { kind: 'group', ref };
  }
  return { kind: 'everyone' };
}

function readLimit(entry: Config, at: string): RateLimit | 'unlimited' {
  const unlimited = entry.getOptionalBoolean('unlimited') ?? false;
  const hasLimit = entry.has('calls') || entry.has('per');
  if (unlimited) {
    if (hasLimit) {
      throw new InputError(`Invalid ${at}: unlimited: true takes no calls or per`);
    }
    return 'unlimited';
  }
  if (!entry.has('calls') || !entry.has('per')) {
    throw new InputError(
      `Invalid ${at}: give calls and per (e.g. calls: 60, per: { minutes: 1 }), or unlimited: true`,
    );
  }
  const calls = entry.getNumber('calls');
  if (!Number.isInteger(calls) || calls < 1) {
    throw new InputError(`Invalid ${at}.calls: must be a positive integer`);
  }
  const windowMs = readOptionalDurationMs(entry, 'per', `${at}.per`, 0, MIN_RATE_LIMIT_WINDOW_MS);
  return { calls, windowMs };
}

function ruleId(rule: Omit<RateLimitRule, 'id' | 'at'>): string {
  const canonical = JSON.stringify([
    rule.server ?? null,
    rule.tool ?? null,
    rule.subject,
    rule.limit === 'unlimited' ? null : [rule.limit.calls, rule.limit.windowMs],
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

function readRule(entry: Config, at: string, widest: boolean): RateLimitRule {
  const server = widest ? undefined : entry.getOptionalString('server');
  if (server !== undefined && !SERVER_NAME.test(server)) {
    throw new InputError(`Invalid ${at}.server "${server.slice(0, 100)}": not a server name`);
  }
  const tool = widest ? undefined : entry.getOptionalString('tool');
  const subject = widest ? ({ kind: 'everyone' } as const) : readSubject(entry, at);
  const limit = readLimit(entry, at);
  const rule = {
    ...(server === undefined ? {} : { server }),
    ...(tool === undefined || tool === '*' ? {} : { tool }),
    subject,
    limit,
  };
  return { id: ruleId(rule), at, ...rule };
}

/**
 * Reads `mcpBroker.rateLimits` from the root config; undefined when it is absent (no limits).
 * Throws an InputError naming the key of the first invalid entry.
 */
export function readRateLimitConfig(root: Config): RateLimitConfig | undefined {
  const section = root.getOptionalConfig('mcpBroker.rateLimits');
  if (section === undefined) return undefined;
  const methods = readMethods(section);
  const rules: RateLimitRule[] = [];
  const defaultEntry = section.getOptionalConfig('default');
  if (defaultEntry !== undefined) {
    const at = 'mcpBroker.rateLimits.default';
    for (const key of ['server', 'tool', 'user', 'group']) {
      if (defaultEntry.has(key)) {
        throw new InputError(
          `Invalid ${at}.${key}: the default is for everyone and every call; put it in overrides`,
        );
      }
    }
    rules.push(readRule(defaultEntry, at, true));
  }
  for (const [i, entry] of (section.getOptionalConfigArray('overrides') ?? []).entries()) {
    const at = `mcpBroker.rateLimits.overrides[${i}]`;
    if (!['server', 'tool', 'user', 'group'].some(key => entry.has(key))) {
      throw new InputError(
        `Invalid ${at}: an override names a server, tool, user or group (for everyone and every call, use default)`,
      );
    }
    rules.push(readRule(entry, at, false));
  }
  // Of two entries with the same scope and subject only one could ever apply: say so.
  const seen = new Map<string, string>();
  for (const rule of rules) {
    const key = JSON.stringify([rule.server, rule.tool, rule.subject]);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new InputError(
        `Invalid ${rule.at}: same server, tool and user/group as ${earlier}; merge the two entries`,
      );
    }
    seen.set(key, rule.at);
  }
  return { rules, ...(methods === undefined ? {} : { methods }) };
}

function readMethods(section: Config): readonly string[] | undefined {
  const methods = section.getOptionalStringArray('methods');
  if (methods === undefined) return undefined;
  const at = 'mcpBroker.rateLimits.methods';
  if (methods.length === 0) {
    throw new InputError(
      `Invalid ${at}: name at least one method (e.g. [tools/call]); to limit nothing, remove mcpBroker.rateLimits`,
    );
  }
  const unique = new Set(methods);
  if (unique.size !== methods.length)
    throw new InputError(`Invalid ${at}: a method is named twice`);
  return [...unique];
}
