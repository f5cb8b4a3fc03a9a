/*
 * The usage routes' answers (docs/contracts/mcp-access.md §7.3) from the usage rows
 * (UsageStore), the broker's current servers, this replica's grant index and the rate limiter's
 * current windows. Decides no permission: AuthorizedUsageService wraps it.
 *
 * What pages read is at most one flush interval behind, per replica (UsageRecorder).
 */
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import type {
  McpServerUsage,
  McpServerUsageList,
  McpServerUsageTotals,
  McpUsageGrant,
  MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import type { StoredAccessGrant } from '../grants/AccessGrantStore';
import type { UsagePageTokens } from './usagePageTokens';
import type {
  MyUsageQuery,
  ServerUsageListQuery,
  ServerUsageQuery,
  UsageCaller,
  UsageService,
} from './UsageService';
import { utcDay, utcDayBefore, type DayRange, type UsageStore } from './UsageStore';

/** A configured server, as the usage pages name it. */
export interface UsageServer {
  name: string;
  owner?: string;
}

/** Options of {@link DefaultUsageService}. */
export interface DefaultUsageServiceOptions {
  store: UsageStore;
  /** The servers configured now (config and registrations). */
  servers: () => readonly UsageServer[];
  /** Grants (absent: no grant source). */
  grants?: {
    /** This replica's live grants of a subject. */
    grantsOf(subject: string): readonly StoredAccessGrant[];
    /** What each quota of a grant counted for a principal in its current window. */
    planUsage(
      grant: StoredAccessGrant,
      principal: string,
    ): Promise<Array<{ used: number; windowEnd: number }>>;
  };
  pageTokens: UsagePageTokens;
  now?: () => number;
}

/** See the file comment. */
export class DefaultUsageService implements UsageService {
  readonly #options: DefaultUsageServiceOptions;
  readonly #now: () => number;

  constructor(options: DefaultUsageServiceOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async myUsage(credentials: UsageCaller, query: MyUsageQuery): Promise<MyMcpUsage> {
    const { principal } = credentials;
    if (principal.type !== 'user') {
      throw new NotAllowedError('GET /usage/my is for signed-in users');
    }
    const ref = principal.userEntityRef;
    const subject = ref.toLocaleLowerCase('en-US');
    const range = this.#range(query.days);
    const rows = await this.#options.store.rowsOf(subject, range, query.server);
    const live = this.#options.grants?.grantsOf(subject) ?? [];
    const grants = await Promise.all(
      live
        .filter(grant => query.server === undefined || grant.target.name === query.server)
        .map(grant => this.#grantOf(grant, `user:${ref}`)),
    );
    return {
      subject,
      ...range,
      days: rows.map(({ principal: _principal, ...row }) => row),
      grants,
    };
  }

  async listServers(
    _credentials: UsageCaller,
    query: ServerUsageListQuery,
  ): Promise<McpServerUsageList> {
    const totals = new Map(
      (await this.#options.store.serverTotals(this.#range(query.days))).map(t => [t.server, t]),
    );
    const servers: McpServerUsageTotals[] = [];
    const configured = this.#options.servers();
    for (const { name, owner } of configured) {
      if (query.visible && !query.visible({ server: name, ...(owner && { owner }) })) continue;
      const total = totals.get(name);
      servers.push({
        server: name,
        ...(owner === undefined ? {} : { owner }),
        calls: total?.calls ?? 0,
        errors: total?.errors ?? 0,
        rateLimited: total?.rateLimited ?? 0,
        people: total?.people ?? 0,
      });
    }
    if (query.includeRemoved === true) {
      const names = new Set(configured.map(server => server.name));
      for (const total of totals.values()) if (!names.has(total.server)) servers.push(total);
    }
    return { servers };
  }

  async serverUsage(
    credentials: UsageCaller,
    server: string,
    query: ServerUsageQuery,
  ): Promise<McpServerUsage> {
    const { store, pageTokens } = this.#options;
    const range = this.#range(query.days);
    const configured = this.#options.servers().find(entry => entry.name === server);
    const series = await store.seriesOf(server, range);
    if (configured === undefined && series.length === 0) {
      throw new NotFoundError(
        `The MCP broker has no server "${server.slice(0, 100)}", and no usage of one in the last ${query.days} days`,
      );
    }
    const binding = ['usage/servers', server, query.days, callerOf(credentials)].join('\u0000');
    const after =
      query.continue === undefined ? undefined : pageTokens.open(binding, query.continue);
    const rows = await store.peopleOf(server, range, query.limit + 1, after);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      server,
      ...(configured?.owner === undefined ? {} : { owner: configured.owner }),
      ...range,
      series,
      people: page.map(person => ({
        ...person,
        grants: (this.#options.grants?.grantsOf(person.principal) ?? [])
          .filter(grant => grant.target.kind === 'server' && grant.target.name === server)
          .map(grant => ({
            title: grant.title,
            plan: grant.plan,
            ...(grant.expiresAt === undefined ? {} : { expiresAt: iso(grant.expiresAt) }),
          })),
      })),
      metadata:
        rows.length > query.limit && last ? { continue: pageTokens.seal(binding, last) } : {},
    };
  }

  async #grantOf(grant: StoredAccessGrant, principal: string): Promise<McpUsageGrant> {
    const windows = (await this.#options.grants?.planUsage(grant, principal)) ?? [];
    return {
      id: grant.id,
      target: { kind: grant.target.kind, name: grant.target.name },
      title: grant.title,
      plan: grant.plan,
      approvedAt: iso(grant.approvedAt),
      ...(grant.expiresAt === undefined ? {} : { expiresAt: iso(grant.expiresAt) }),
      ...(grant.links?.manage === undefined ? {} : { manage: grant.links.manage }),
      limits: grant.limits.map((limit, i) => ({
        calls: limit.calls,
        windowMs: limit.windowMs,
        ...(limit.tools === undefined ? {} : { tools: [...limit.tools] }),
        used: windows[i].used,
        windowEndsAt: iso(windows[i].windowEnd),
      })),
    };
  }

  /** The `days` UTC days ending today, inclusive. */
  #range(days: number): DayRange {
    const now = this.#now();
    return { from: utcDayBefore(now, days - 1), to: utcDay(now) };
  }
}

/** Who asks, for binding page tokens: a user's entity ref, or `service:<subject>`. */
function callerOf({ principal }: UsageCaller): string {
  return principal.type === 'user' ? principal.userEntityRef : `service:${principal.subject}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
