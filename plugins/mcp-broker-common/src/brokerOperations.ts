/*
 * The broker's REST operations (docs/contracts/mcp-access.md §6.9), one entry each: method,
 * path, the zod schemas of its path parameters, query, body and answer, its success status and
 * the permission that guards it. This table is the REST contract's one source:
 * - the broker's routers bind a handler to each entry and validate with its schemas, in one
 *   place (a bad parameter is a 400 naming it);
 * - a test of the broker fails when a router serves a route that is not here, or this table
 *   names one no router serves, and checks the real routers' answers against `response`;
 * - McpBrokerClient builds each call from its entry.
 *
 * Not REST, and so not here: the MCP endpoints (`/mcp`, `/endpoints/:endpoint/mcp`: the MCP
 * method table), the credential page (`/connect/...`: HTML) and the standard documents under
 * `/.well-known` (OAuth metadata, the JWKS).
 *
 * Each schema is written `x as typeof x` so that the declaration of this table (and the API
 * report) names it instead of repeating its whole type.
 */
import type { Permission } from '@backstage/plugin-permission-common';
import { z } from 'zod';
import { mcpBrokerCatalogSchema } from './catalog';
import {
  mcpConnectionListSchema,
  mcpCredentialBodySchema,
  mcpCredentialStoredSchema,
} from './credentials';
import {
  mcpBrokerServerReadPermission,
  mcpBrokerSessionCreatePermission,
  mcpBrokerStatusReadPermission,
  mcpBrokerToolApprovePermission,
  mcpBrokerUsageReadPermission,
} from './permissions';
import { mcpServerDescriptionSchema, mcpServerKindSchema, mcpServerListSchema } from './servers';
import { mcpBrokerStatusSchema } from './status';
import {
  mcpToolChangeDecisionBodySchema,
  mcpToolChangeDecisionResultSchema,
  mcpToolChangeDecisionSchema,
  mcpToolChangesSchema,
} from './toolChanges';
import {
  mcpServerNameParamSchema,
  mcpServerUsageListQuerySchema,
  mcpServerUsageListSchema,
  mcpServerUsageQuerySchema,
  mcpServerUsageSchema,
  myMcpUsageQuerySchema,
  myMcpUsageSchema,
} from './usage';

/**
 * One operation of the broker's REST API. `path` is relative to `/api/mcp-broker`, with
 * Express-style parameters (`:server`); `response` is absent for a 204.
 *
 * @public
 */
export interface BrokerOperation {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** The path parameters, one key per `:name` of `path`. */
  params?: z.AnyZodObject;
  /** The query the router validates (absent: the operation takes none). */
  query?: z.ZodTypeAny;
  /** The JSON body the router validates (absent: the operation reads none). */
  body?: z.ZodTypeAny;
  /** The status of a successful answer. */
  status: 200 | 204;
  /** The body of a successful answer. */
  response?: z.ZodTypeAny;
  /**
   * The permission the broker decides before answering (absent: any signed-in caller, for
   * their own records, or nobody's business, as for `/health`).
   */
  permission?: Permission;
}

/** The path parameters of `GET /servers/:kind/:name`. @public */
export const mcpServerRefParamsSchema = z.object({
  kind: z.enum(mcpServerKindSchema.options, {
    errorMap: () => ({ message: 'kind must be "server" or "endpoint"' }),
  }),
  name: z.string(),
});

/** The path parameter of the routes under one server (`/usage/servers/:server`, …). @public */
export const mcpServerParamsSchema = z.object({ server: mcpServerNameParamSchema });

/** The path parameters of `POST /pins/:server/:tool/:decision`. @public */
export const mcpToolChangeParamsSchema = z.object({
  server: mcpServerNameParamSchema,
  /** The backend's own tool name. */
  tool: z.string(),
  decision: z.enum(mcpToolChangeDecisionSchema.options, {
    errorMap: () => ({ message: 'decision must be "approve" or "reject"' }),
  }),
});

/** The body of `GET /health`. @public */
export const mcpBrokerHealthSchema = z.object({ status: z.literal('ok') });

/**
 * Every operation of the broker's REST API, by operation id.
 *
 * @public
 */
export const brokerOperations = {
  getHealth: {
    method: 'get',
    path: '/health',
    status: 200,
    response: mcpBrokerHealthSchema as typeof mcpBrokerHealthSchema,
  },
  getStatus: {
    method: 'get',
    path: '/status',
    status: 200,
    response: mcpBrokerStatusSchema as typeof mcpBrokerStatusSchema,
    permission: mcpBrokerStatusReadPermission,
  },
  getCatalog: {
    method: 'get',
    path: '/catalog',
    status: 200,
    response: mcpBrokerCatalogSchema as typeof mcpBrokerCatalogSchema,
    permission: mcpBrokerSessionCreatePermission,
  },
  listServers: {
    method: 'get',
    path: '/servers',
    status: 200,
    response: mcpServerListSchema as typeof mcpServerListSchema,
    permission: mcpBrokerServerReadPermission,
  },
  getServer: {
    method: 'get',
    path: '/servers/:kind/:name',
    params: mcpServerRefParamsSchema as typeof mcpServerRefParamsSchema,
    status: 200,
    response: mcpServerDescriptionSchema as typeof mcpServerDescriptionSchema,
    permission: mcpBrokerServerReadPermission,
  },
  getMyUsage: {
    method: 'get',
    path: '/usage/my',
    query: myMcpUsageQuerySchema as typeof myMcpUsageQuerySchema,
    status: 200,
    response: myMcpUsageSchema as typeof myMcpUsageSchema,
    permission: mcpBrokerSessionCreatePermission,
  },
  listServerUsage: {
    method: 'get',
    path: '/usage/servers',
    query: mcpServerUsageListQuerySchema as typeof mcpServerUsageListQuerySchema,
    status: 200,
    response: mcpServerUsageListSchema as typeof mcpServerUsageListSchema,
    permission: mcpBrokerUsageReadPermission,
  },
  getServerUsage: {
    method: 'get',
    path: '/usage/servers/:server',
    params: mcpServerParamsSchema as typeof mcpServerParamsSchema,
    query: mcpServerUsageQuerySchema as typeof mcpServerUsageQuerySchema,
    status: 200,
    response: mcpServerUsageSchema as typeof mcpServerUsageSchema,
    permission: mcpBrokerUsageReadPermission,
  },
  listToolChanges: {
    method: 'get',
    path: '/pins',
    status: 200,
    response: mcpToolChangesSchema as typeof mcpToolChangesSchema,
    permission: mcpBrokerToolApprovePermission,
  },
  decideToolChange: {
    method: 'post',
    path: '/pins/:server/:tool/:decision',
    params: mcpToolChangeParamsSchema as typeof mcpToolChangeParamsSchema,
    body: mcpToolChangeDecisionBodySchema as typeof mcpToolChangeDecisionBodySchema,
    status: 200,
    response: mcpToolChangeDecisionResultSchema as typeof mcpToolChangeDecisionResultSchema,
    permission: mcpBrokerToolApprovePermission,
  },
  listCredentials: {
    method: 'get',
    path: '/credentials',
    status: 200,
    response: mcpConnectionListSchema as typeof mcpConnectionListSchema,
  },
  storeCredential: {
    method: 'put',
    path: '/credentials/:server',
    params: mcpServerParamsSchema as typeof mcpServerParamsSchema,
    body: mcpCredentialBodySchema as typeof mcpCredentialBodySchema,
    status: 200,
    response: mcpCredentialStoredSchema as typeof mcpCredentialStoredSchema,
  },
  deleteCredential: {
    method: 'delete',
    path: '/credentials/:server',
    params: mcpServerParamsSchema as typeof mcpServerParamsSchema,
    status: 204,
  },
} as const satisfies Record<string, BrokerOperation>;

/** The operation ids of {@link brokerOperations}. @public */
export type BrokerOperationId = keyof typeof brokerOperations;

/** The path parameters of an operation (`never`: it has none). @public */
export type BrokerOperationParams<K extends BrokerOperationId> =
  (typeof brokerOperations)[K] extends { params: infer S extends z.ZodTypeAny }
    ? z.input<S>
    : never;

/** The query a client sends (`never`: the operation takes none). @public */
export type BrokerOperationQuery<K extends BrokerOperationId> =
  (typeof brokerOperations)[K] extends { query: infer S extends z.ZodTypeAny }
    ? { [P in keyof z.output<S>]?: z.output<S>[P] }
    : never;

/** What a client sends as the body of an operation (`never`: it reads none). @public */
export type BrokerOperationBody<K extends BrokerOperationId> =
  (typeof brokerOperations)[K] extends { body: infer S extends z.ZodTypeAny } ? z.input<S> : never;

/** The body of an operation's successful answer (`void` for a 204). @public */
export type BrokerOperationResponse<K extends BrokerOperationId> =
  (typeof brokerOperations)[K] extends { response: infer S extends z.ZodTypeAny }
    ? z.output<S>
    : void;
