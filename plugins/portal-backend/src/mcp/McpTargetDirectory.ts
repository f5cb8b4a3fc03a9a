/*
 * Where the portal finds the MCP servers and endpoints an MCP product may target (contract
 * mcp-access §3.3): the catalog, in which the broker's catalog module publishes each one as
 * an `API` entity of type `mcp-server`, annotated with its broker name. The catalog is the
 * registry, so the portal neither knows nor calls the broker.
 *
 * Failure modes: a catalog that cannot be reached surfaces as ServiceUnavailableError (503,
 * with Retry-After through the router), never as "no such server".
 */
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import type { AuthService } from '@backstage/backend-plugin-api';
import { ServiceUnavailableError } from '@backstage/errors';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import {
  MCP_ENDPOINT_ANNOTATION,
  MCP_SERVER_ANNOTATION,
  type McpTarget,
} from '@devportal/plugin-portal-common';

/** What the portal needs to know of an MCP target. */
export interface McpTargetEntry {
  /** The catalog entity describing it, e.g. `api:default/mcp-server-example`. */
  entityRef: string;
  /** Its owner, as an entity ref in lower case (`group:default/payments-team`). */
  owner: string;
  /** What a person calls it. */
  title: string;
}

/** Looks up MCP targets; undefined when there is none by that name. */
export interface McpTargetDirectory {
  get(target: McpTarget): Promise<McpTargetEntry | undefined>;
}

/** Options of {@link CatalogMcpTargetDirectory.create}. */
export interface CatalogMcpTargetDirectoryOptions {
  catalog: CatalogService;
  auth: AuthService;
}

/** {@link McpTargetDirectory} over the catalog, with the portal's own service credentials. */
export class CatalogMcpTargetDirectory implements McpTargetDirectory {
  readonly #catalog: CatalogService;
  readonly #auth: AuthService;

  static create(options: CatalogMcpTargetDirectoryOptions): CatalogMcpTargetDirectory {
    return new CatalogMcpTargetDirectory(options);
  }

  private constructor(options: CatalogMcpTargetDirectoryOptions) {
    this.#catalog = options.catalog;
    this.#auth = options.auth;
  }

  async get(target: McpTarget): Promise<McpTargetEntry | undefined> {
    const annotation =
      target.kind === 'MCPServer' ? MCP_SERVER_ANNOTATION : MCP_ENDPOINT_ANNOTATION;
    let items;
    try {
      ({ items } = await this.#catalog.getEntities(
        {
          filter: {
            kind: 'API',
            'spec.type': 'mcp-server',
            [`metadata.annotations.${annotation}`]: target.name,
          },
          limit: 1,
        },
        { credentials: await this.#auth.getOwnServiceCredentials() },
      ));
    } catch (error) {
      throw new ServiceUnavailableError(
        `the catalog could not be asked for MCP targets: ${(error as Error).message}`,
      );
    }
    const entity = items[0];
    const owner = (entity?.spec as { owner?: unknown } | undefined)?.owner;
    if (!entity || typeof owner !== 'string') return undefined;
    return {
      entityRef: stringifyEntityRef(entity).toLocaleLowerCase('en-US'),
      // A bare owner ("payments-team") is a group, as the catalog reads `spec.owner`.
      owner: stringifyEntityRef(
        parseEntityRef(owner, { defaultKind: 'group', defaultNamespace: 'default' }),
      ).toLocaleLowerCase('en-US'),
      title: entity.metadata.title ?? target.name,
    };
  }
}
