/*
 * Who may ask what of the usage routes (docs/contracts/mcp-access.md §7.3, §10.1), as a decorator
 * around a UsageService: it decides, the inner service answers.
 *
 * - `myUsage`: a signed-in user holding `mcp-broker.session.create` (whoever may use the broker
 *   sees their own use of it); a service, or a user without it, gets 403 naming why.
 * - `listServers` and `serverUsage`: `mcp-broker.usage.read`, a resource permission on
 *   `mcp-broker-server`, asked once per request with `authorizeConditional`:
 *   ALLOW (admins) → every server, removed ones with usage included;
 *   CONDITIONAL (owners, through IS_SERVER_OWNER with `$ownerRefs`) → the conditions applied in
 *   process to each configured server `{server, owner}` (no round trip per server); a server no
 *   longer configured has no owner to match, so only ALLOW reads it;
 *   DENY → 403. A server the caller may not read is 403, not 404: servers are no secret (they are
 *   in the catalog).
 */
import type { PermissionsService } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import { AuthorizeResult, type PolicyDecision } from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import {
  mcpBrokerSessionCreatePermission,
  mcpBrokerUsageReadPermission,
  type McpServerUsage,
  type McpServerUsageList,
  type MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import type { BrokerRules, BrokerServerResource } from '../permissions/rules';
import type {
  MyUsageQuery,
  ServerUsageListQuery,
  ServerUsageQuery,
  UsageCaller,
  UsageService,
} from './UsageService';

/** Options of {@link AuthorizedUsageService}. */
export interface AuthorizedUsageServiceOptions {
  inner: UsageService;
  permissions: PermissionsService;
  /** The rules of `mcp-broker-server` (the plugin's registered ones). */
  rules: BrokerRules['server'];
  /** A configured server as the rules see it; undefined for a name no server has. */
  serverOf: (name: string) => BrokerServerResource | undefined;
}

/** See the file comment. */
export class AuthorizedUsageService implements UsageService {
  readonly #options: AuthorizedUsageServiceOptions;
  readonly #applies: (decision: PolicyDecision, server: BrokerServerResource) => boolean;

  constructor(options: AuthorizedUsageServiceOptions) {
    this.#options = options;
    this.#applies = createConditionAuthorizer(options.rules);
  }

  async myUsage(credentials: UsageCaller, query: MyUsageQuery): Promise<MyMcpUsage> {
    if (credentials.principal.type !== 'user') {
      throw new NotAllowedError(
        'GET /usage/my shows a signed-in person their own usage; a service has none. Sign in as a user',
      );
    }
    const [decision] = await this.#options.permissions.authorize(
      [{ permission: mcpBrokerSessionCreatePermission }],
      { credentials },
    );
    if (decision.result !== AuthorizeResult.ALLOW) {
      throw new NotAllowedError(
        `Your MCP usage is shown to people who may use the MCP broker: ask an admin for the permission ${mcpBrokerSessionCreatePermission.name}`,
      );
    }
    return this.#options.inner.myUsage(credentials, query);
  }

  async listServers(
    credentials: UsageCaller,
    query: ServerUsageListQuery,
  ): Promise<McpServerUsageList> {
    const decision = await this.#decide(credentials);
    if (decision.result === AuthorizeResult.DENY) throw denied('the usage of MCP servers');
    if (decision.result === AuthorizeResult.ALLOW) {
      return this.#options.inner.listServers(credentials, { ...query, includeRemoved: true });
    }
    return this.#options.inner.listServers(credentials, {
      ...query,
      visible: server => (query.visible?.(server) ?? true) && this.#applies(decision, server),
      includeRemoved: false,
    });
  }

  async serverUsage(
    credentials: UsageCaller,
    server: string,
    query: ServerUsageQuery,
  ): Promise<McpServerUsage> {
    const decision = await this.#decide(credentials);
    if (decision.result === AuthorizeResult.CONDITIONAL) {
      const resource = this.#options.serverOf(server);
      if (resource !== undefined && this.#applies(decision, resource)) {
        return this.#options.inner.serverUsage(credentials, server, query);
      }
    } else if (decision.result === AuthorizeResult.ALLOW) {
      return this.#options.inner.serverUsage(credentials, server, query);
    }
    throw denied(`the usage of MCP server "${server.slice(0, 100)}"`);
  }

  async #decide(credentials: UsageCaller): Promise<PolicyDecision> {
    const [decision] = await this.#options.permissions.authorizeConditional(
      [{ permission: mcpBrokerUsageReadPermission }],
      { credentials },
    );
    return decision;
  }
}

function denied(what: string): NotAllowedError {
  return new NotAllowedError(
    `Reading ${what} needs the permission ${mcpBrokerUsageReadPermission.name} (owners of a server, and admins, hold it)`,
  );
}
