/*
 * What the usage routes ask (docs/contracts/mcp-access.md §7.3), with no HTTP and no permission
 * in it: DefaultUsageService answers from the usage rows, the server set and the grants;
 * AuthorizedUsageService wraps it and decides who may ask what. A period is the `days` UTC days
 * ending today, inclusive.
 */
import type {
  BackstageCredentials,
  BackstageServicePrincipal,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import type {
  McpServerUsage,
  McpServerUsageList,
  MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';

/** Who asks: a signed-in user or a service. */
export type UsageCaller = BackstageCredentials<BackstageUserPrincipal | BackstageServicePrincipal>;

/** `GET /usage/my`: the period, and one server only when given. */
export interface MyUsageQuery {
  days: number;
  server?: string;
}

/** `GET /usage/servers`: the period; which servers the caller may see. */
export interface ServerUsageListQuery {
  days: number;
  /** The configured servers to list (owner as in config); absent: every one. */
  visible?: (server: { server: string; owner?: string }) => boolean;
  /** Also list servers no longer configured that have usage in the period (default no). */
  includeRemoved?: boolean;
}

/** `GET /usage/servers/:server`: the period and a page of people. */
export interface ServerUsageQuery {
  days: number;
  /** 1–1000. */
  limit: number;
  /** The previous page's `metadata.continue`. */
  continue?: string;
}

/** The usage routes' questions; see the file comment. */
export interface UsageService {
  /** The caller's own usage and live grants (callers are users). */
  myUsage(credentials: UsageCaller, query: MyUsageQuery): Promise<MyMcpUsage>;
  /** Each server's totals in the period. */
  listServers(credentials: UsageCaller, query: ServerUsageListQuery): Promise<McpServerUsageList>;
  /**
   * One server's use per day and tool, and its people (paged). Rejects with NotFoundError when
   * the server is not configured and has no usage in the period, InputError for a `continue`
   * that is not this caller's for this query.
   */
  serverUsage(
    credentials: UsageCaller,
    server: string,
    query: ServerUsageQuery,
  ): Promise<McpServerUsage>;
}
