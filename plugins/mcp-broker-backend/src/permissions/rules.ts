/*
 * The broker's permission resources and rules (spec §8): IS_ON_SERVER, HAS_NAME and
 * HAS_ACCESS_GRANT (docs/contracts/mcp-access.md §6.1) for tools, prompts and resources,
 * HAS_TOOL_ANNOTATION for tools, and IS_SERVER_OWNER and IS_ON_SERVER for servers (the usage
 * routes, §6.9). Policies (RBAC conditional
 * policies) combine them with anyOf / allOf / not.
 *
 * The broker applies conditional decisions itself, in process, to each item of its
 * aggregated catalog (see PermittedCatalog), so a decision costs one permission round trip
 * per principal and catalog version, never one per item or call. `toQuery` exists because
 * the framework requires it; the broker never queries a store with it.
 */
import {
  createPermissionResourceRef,
  createPermissionRule,
} from '@backstage/plugin-permission-node';
import {
  MCP_BROKER_PROMPT_RESOURCE_TYPE,
  MCP_BROKER_RESOURCE_RESOURCE_TYPE,
  MCP_BROKER_SERVER_RESOURCE_TYPE,
  MCP_BROKER_TOOL_RESOURCE_TYPE,
} from '@devportal/plugin-mcp-broker-common';
import { isStringArray, objectProblem, ruleParamsSchema } from './paramsSchema';

/** A backend item as the rules see it: its configured server and its own name (or URI). */
export interface BrokerItemResource {
  /** The configured server name. */
  server: string;
  /** The backend's own (unprefixed) tool or prompt name, or the resource URI / URI template. */
  name: string;
}

/** A tool as the rules see it: also its declared annotations (absent ones take MCP's defaults). */
export interface BrokerToolResource extends BrokerItemResource {
  annotations?: Readonly<Record<string, unknown>>;
}

/** A server as the rules see it: its configured name and its owner (contract §2.4), if any. */
export interface BrokerServerResource {
  server: string;
  /** The owner's normalised entity ref (lower case). */
  owner?: string;
}

/** The query form of the rules (what `toQuery` produces; never run against a store). */
export type BrokerItemQuery =
  | { servers: string[] }
  | { patterns: string[] }
  | { annotation: ToolAnnotation; value: boolean }
  | { grantedTo: string[] }
  | { ownedBy: string[] };

/**
 * What HAS_ACCESS_GRANT asks: whether one of `claims` (entity refs) holds a live access grant
 * that covers an item of `server` (grants/GrantIndex.ts behind it; none without a source).
 */
export interface GrantLookup {
  covers(claims: readonly string[], server: string): boolean;
}

/** No grants at all: HAS_ACCESS_GRANT is false for everyone. */
export const NO_GRANTS: GrantLookup = { covers: () => false };

/** Resource ref of `mcp-broker-tool`. */
export const toolResourceRef = createPermissionResourceRef<
  BrokerToolResource,
  BrokerItemQuery
>().with({
  pluginId: 'mcp-broker',
  resourceType: MCP_BROKER_TOOL_RESOURCE_TYPE,
});

/** Resource ref of `mcp-broker-prompt`. */
export const promptResourceRef = createPermissionResourceRef<
  BrokerItemResource,
  BrokerItemQuery
>().with({
  pluginId: 'mcp-broker',
  resourceType: MCP_BROKER_PROMPT_RESOURCE_TYPE,
});

/** Resource ref of `mcp-broker-resource` (resources and resource templates). */
export const resourceResourceRef = createPermissionResourceRef<
  BrokerItemResource,
  BrokerItemQuery
>().with({
  pluginId: 'mcp-broker',
  resourceType: MCP_BROKER_RESOURCE_RESOURCE_TYPE,
});

/** Resource ref of `mcp-broker-server` (ref: the server name). */
export const serverResourceRef = createPermissionResourceRef<
  BrokerServerResource,
  BrokerItemQuery
>().with({
  pluginId: 'mcp-broker',
  resourceType: MCP_BROKER_SERVER_RESOURCE_TYPE,
});

/** The tool annotations HAS_TOOL_ANNOTATION can test. */
export type ToolAnnotation =
  'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';

/** The MCP specification's value of each annotation when a tool does not declare it. */
export const TOOL_ANNOTATION_DEFAULTS: Readonly<Record<ToolAnnotation, boolean>> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

const TOOL_ANNOTATIONS = Object.keys(TOOL_ANNOTATION_DEFAULTS) as ToolAnnotation[];

/**
 * A tool's annotation as the rules read it: the declared boolean, else MCP's default (a
 * declared non-boolean is treated as absent: a hint of the wrong type promises nothing).
 */
export function toolAnnotation(tool: BrokerToolResource, annotation: ToolAnnotation): boolean {
  const declared = tool.annotations?.[annotation];
  return typeof declared === 'boolean' ? declared : TOOL_ANNOTATION_DEFAULTS[annotation];
}

/**
 * A matcher for case-sensitive glob patterns where `*` matches any run of characters
 * (including none) and every other character, `?` and `[` included, matches only itself — the
 * HAS_NAME rule's dialect, where `?` must stay literal because it also matches resource URIs.
 * With `anyOneCharacter`, `?` matches exactly one character: for patterns on tool names only
 * (curated endpoints), which MCP's naming rule keeps free of `?`.
 */
export function globMatcher(
  patterns: readonly string[],
  options: { anyOneCharacter?: boolean } = {},
): (name: string) => boolean {
  const sources = patterns.map(pattern =>
    pattern
      .split('*')
      .map(part => {
        const literal = part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
        return options.anyOneCharacter ? literal.replaceAll('\\?', '.') : literal;
      })
      .join('.*'),
  );
  if (sources.length === 0) return () => false;
  const regExp = new RegExp(`^(?:${sources.join('|')})$`, 's');
  return name => regExp.test(name);
}

/** Parameters of IS_ON_SERVER. */
export type IsOnServerParams = { servers: string[] };
/** Parameters of HAS_NAME. */
export type HasNameParams = { patterns: string[] };
/** Parameters of HAS_ACCESS_GRANT. */
export type HasAccessGrantParams = { claims: string[] };
/** Parameters of HAS_TOOL_ANNOTATION. */
export type HasToolAnnotationParams = { annotation: ToolAnnotation; value: boolean };

const serversSchema = ruleParamsSchema<IsOnServerParams>(
  {
    type: 'object',
    properties: {
      servers: { type: 'array', items: { type: 'string' }, description: 'Configured server names' },
    },
    required: ['servers'],
    additionalProperties: false,
  },
  value =>
    objectProblem(value, ['servers']) ??
    (isStringArray((value as IsOnServerParams).servers)
      ? undefined
      : 'servers must be an array of server names'),
);

const patternsSchema = ruleParamsSchema<HasNameParams>(
  {
    type: 'object',
    properties: {
      patterns: {
        type: 'array',
        items: { type: 'string' },
        description:
          'Case-sensitive glob patterns of the own name or URI; * matches any run of characters',
      },
    },
    required: ['patterns'],
    additionalProperties: false,
  },
  value =>
    objectProblem(value, ['patterns']) ??
    (isStringArray((value as HasNameParams).patterns)
      ? undefined
      : 'patterns must be an array of glob patterns'),
);

const claimsSchema = ruleParamsSchema<HasAccessGrantParams>(
  {
    type: 'object',
    properties: {
      claims: {
        type: 'array',
        items: { type: 'string' },
        description:
          'Entity refs (the grant holder, or the owner); policies pass $currentUser or $ownerRefs',
      },
    },
    required: ['claims'],
    additionalProperties: false,
  },
  value =>
    objectProblem(value, ['claims']) ??
    (isStringArray((value as HasAccessGrantParams).claims)
      ? undefined
      : 'claims must be an array of entity refs'),
);

const annotationSchema = ruleParamsSchema<HasToolAnnotationParams>(
  {
    type: 'object',
    properties: {
      annotation: {
        type: 'string',
        enum: TOOL_ANNOTATIONS,
        description: 'A tool annotation of MCP',
      },
      value: {
        type: 'boolean',
        description: 'The value it must have (absent annotations take MCP defaults)',
      },
    },
    required: ['annotation', 'value'],
    additionalProperties: false,
  },
  value => {
    const problem = objectProblem(value, ['annotation', 'value']);
    if (problem !== undefined) return problem;
    const params = value as HasToolAnnotationParams;
    if (!TOOL_ANNOTATIONS.includes(params.annotation))
      return `annotation must be one of ${TOOL_ANNOTATIONS.join(', ')}`;
    return typeof params.value === 'boolean' ? undefined : 'value must be true or false';
  },
);

/**
 * One pattern matcher per distinct `patterns` array: rules are applied to every catalog item
 * with the same params object, so the regular expression is built once per decision.
 */
const matchers = new WeakMap<readonly string[], (name: string) => boolean>();
function matcherOf(patterns: readonly string[]): (name: string) => boolean {
  let matcher = matchers.get(patterns);
  if (matcher === undefined) {
    matcher = globMatcher(patterns);
    matchers.set(patterns, matcher);
  }
  return matcher;
}

/** IS_ON_SERVER, without its resource ref (the same rule exists for all three types). */
const isOnServer = {
  name: 'IS_ON_SERVER',
  description: 'Allow items of these MCP servers (configured server names)',
  paramsSchema: serversSchema,
  apply: (item: BrokerItemResource, { servers }: IsOnServerParams) => servers.includes(item.server),
  toQuery: ({ servers }: IsOnServerParams) => ({ servers }),
};

/** HAS_NAME, without its resource ref (the same rule exists for all three types). */
const hasName = {
  name: 'HAS_NAME',
  description:
    'Allow items whose own (unprefixed) name or URI matches one of these case-sensitive glob patterns (* matches any run of characters)',
  paramsSchema: patternsSchema,
  apply: (item: BrokerItemResource, { patterns }: HasNameParams) => matcherOf(patterns)(item.name),
  toQuery: ({ patterns }: HasNameParams) => ({ patterns }),
};

/** HAS_TOOL_ANNOTATION: the tool's annotation (or MCP's default) equals `value`. */
export const hasToolAnnotationRule = createPermissionRule({
  name: 'HAS_TOOL_ANNOTATION',
  description:
    "Allow tools whose annotation equals the value; absent annotations take MCP's defaults (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true)",
  resourceRef: toolResourceRef,
  paramsSchema: annotationSchema,
  apply: (tool: BrokerToolResource, { annotation, value }: HasToolAnnotationParams) =>
    toolAnnotation(tool, annotation) === value,
  toQuery: ({ annotation, value }: HasToolAnnotationParams) => ({ annotation, value }),
});

/** IS_SERVER_OWNER: the server's owner is one of the claims (compared without case). */
export const isServerOwnerRule = createPermissionRule({
  name: 'IS_SERVER_OWNER',
  description:
    'Allow MCP servers whose owner (config servers[].owner) is one of the claims; policies pass $ownerRefs',
  resourceRef: serverResourceRef,
  paramsSchema: claimsSchema,
  apply: (server: BrokerServerResource, { claims }: HasAccessGrantParams) =>
    server.owner !== undefined &&
    claims.some(claim => claim.toLocaleLowerCase('en-US') === server.owner),
  toQuery: ({ claims }: HasAccessGrantParams) => ({ ownedBy: claims }),
});

/** IS_ON_SERVER for servers: the server is one of `servers`. */
const isServerNamed = createPermissionRule({
  ...isOnServer,
  resourceRef: serverResourceRef,
  apply: (server: BrokerServerResource, { servers }: IsOnServerParams) =>
    servers.includes(server.server),
});

/** HAS_ACCESS_GRANT over `grants`, without its resource ref (the same rule for all three types). */
function hasAccessGrant(grants: GrantLookup) {
  return {
    name: 'HAS_ACCESS_GRANT',
    description:
      'Allow items of MCP servers on which one of the claims holds a live access grant (approved in the portal, not expired)',
    paramsSchema: claimsSchema,
    apply: (item: BrokerItemResource, { claims }: HasAccessGrantParams) =>
      grants.covers(claims, item.server),
    toQuery: ({ claims }: HasAccessGrantParams) => ({ grantedTo: claims }),
  };
}

/** The rules of the three resource types, with HAS_ACCESS_GRANT reading `grants`. */
export function createBrokerRules(grants: GrantLookup = NO_GRANTS) {
  const granted = hasAccessGrant(grants);
  return {
    /** Every rule of `mcp-broker-tool`. */
    tool: [
      createPermissionRule({ ...isOnServer, resourceRef: toolResourceRef }),
      createPermissionRule({ ...hasName, resourceRef: toolResourceRef }),
      hasToolAnnotationRule,
      createPermissionRule({ ...granted, resourceRef: toolResourceRef }),
    ],
    /** Every rule of `mcp-broker-prompt`. */
    prompt: [
      createPermissionRule({ ...isOnServer, resourceRef: promptResourceRef }),
      createPermissionRule({ ...hasName, resourceRef: promptResourceRef }),
      createPermissionRule({ ...granted, resourceRef: promptResourceRef }),
    ],
    /** Every rule of `mcp-broker-resource`. */
    resource: [
      createPermissionRule({ ...isOnServer, resourceRef: resourceResourceRef }),
      createPermissionRule({ ...hasName, resourceRef: resourceResourceRef }),
      createPermissionRule({ ...granted, resourceRef: resourceResourceRef }),
    ],
    /** Every rule of `mcp-broker-server`. */
    server: [isServerOwnerRule, isServerNamed],
  };
}

/** The rules of the three resource types; see {@link createBrokerRules}. */
export type BrokerRules = ReturnType<typeof createBrokerRules>;
