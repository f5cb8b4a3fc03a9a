/*
 * `mcpBroker.endpoints.<name>` (spec §13, docs/contracts/curated-endpoints.md §2): named, narrower
 * views of the broker — some servers, some of their tools (globs on the prefixed names clients
 * see, annotation filters), per-tool title/description overrides and their own instructions.
 * Parsed into typed objects once (at start-up, and again on config reload); a bad entry throws an
 * InputError naming the key (`Invalid mcpBroker.endpoints.triage.tools.include[1]: …`). A server
 * name that no server has is allowed (a registration may bring it later): the endpoint says so.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { isValidServerName } from '../config';
import { TOOL_ANNOTATION_DEFAULTS, type ToolAnnotation } from '../permissions/rules';

/** What clients see of one tool through an endpoint instead of the backend's own. */
export interface ToolOverride {
  readonly title?: string;
  readonly description?: string;
}

/** One curated endpoint as configured; see the file comment. */
export interface CuratedEndpointConfig {
  /** `[a-z0-9-]+`, at most {@link MAX_ENDPOINT_NAME_LENGTH} characters. */
  readonly name: string;
  /** `serverInfo.title`; default the name. */
  readonly title?: string;
  /** The `instructions` of `initialize` and `server/discover` through the endpoint. */
  readonly instructions?: string;
  /** Names of the broker servers whose items the endpoint may show (at least one). */
  readonly servers: readonly string[];
  /**
   * Globs on prefixed tool names (`*` any run of characters as in the HAS_NAME rule, and `?` one
   * character): a tool must match one (absent: every tool).
   */
  readonly include?: readonly string[];
  /**
   * Exact prefixed tool names, matched literally (an MCPVirtualServer's `spec.tools`): a tool
   * must be one of them, as well as pass `include`.
   */
  readonly includeNames?: readonly string[];
  /** Globs on prefixed tool names: a tool matching one is left out. */
  readonly exclude: readonly string[];
  /** A tool passes when each named hint (its declared value, or MCP's default) is as given. */
  readonly annotations: Readonly<Partial<Record<ToolAnnotation, boolean>>>;
  /** Per prefixed tool name. */
  readonly overrides: ReadonlyMap<string, ToolOverride>;
}

/** Longest endpoint name (a DNS label's length, so a name fits wherever a label does). */
export const MAX_ENDPOINT_NAME_LENGTH = 63;
/** Longest `instructions` of an endpoint (characters). */
export const MAX_ENDPOINT_INSTRUCTIONS_LENGTH = 4000;

const ENDPOINT_NAME = /^[a-z0-9-]+$/;

/** True for a valid endpoint name. */
export function isValidEndpointName(name: string): boolean {
  return name.length <= MAX_ENDPOINT_NAME_LENGTH && ENDPOINT_NAME.test(name);
}

/** Reads every `mcpBroker.endpoints.<name>` of the root config (none when the key is absent). */
export function readCuratedEndpoints(root: Config): CuratedEndpointConfig[] {
  const section = root.getOptionalConfig('mcpBroker.endpoints');
  if (section === undefined) return [];
  return section.keys().map(name => readEndpoint(section.getConfig(name), name));
}

function readEndpoint(entry: Config, name: string): CuratedEndpointConfig {
  const at = `mcpBroker.endpoints.${name}`;
  if (!isValidEndpointName(name)) {
    throw new InputError(
      `Invalid ${at}: an endpoint name uses lower-case letters, digits and "-" ` +
        `(at most ${MAX_ENDPOINT_NAME_LENGTH} characters)`,
    );
  }
  const servers = readStrings(entry, 'servers', at);
  if (servers === undefined || servers.length === 0) {
    throw new InputError(`Invalid ${at}.servers: name at least one broker server`);
  }
  servers.forEach((server, i) => {
    if (!isValidServerName(server)) {
      throw new InputError(`Invalid ${at}.servers[${i}]: "${server}" is not a server name`);
    }
  });
  const instructions = readText(entry, 'instructions', at);
  if (instructions !== undefined && instructions.length > MAX_ENDPOINT_INSTRUCTIONS_LENGTH) {
    throw new InputError(
      `Invalid ${at}.instructions: at most ${MAX_ENDPOINT_INSTRUCTIONS_LENGTH} characters`,
    );
  }
  const title = readText(entry, 'title', at);
  return {
    name,
    ...(title === undefined ? {} : { title }),
    ...(instructions === undefined ? {} : { instructions }),
    servers: [...new Set(servers)],
    ...optional('include', readGlobs(entry, 'tools.include', at)),
    exclude: readGlobs(entry, 'tools.exclude', at) ?? [],
    annotations: readAnnotations(entry, at),
    overrides: readOverrides(entry, at),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function readStrings(entry: Config, key: string, at: string): string[] | undefined {
  const value = entry.getOptional(key);
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some(item => typeof item !== 'string')) {
    throw new InputError(`Invalid ${at}.${key}: must be a list of strings`);
  }
  return value as string[];
}

function readText(entry: Config, key: string, at: string): string | undefined {
  let value: string | undefined;
  try {
    value = entry.getOptionalString(key);
  } catch {
    throw new InputError(`Invalid ${at}.${key}: must be a non-empty string`);
  }
  if (value !== undefined && value.trim() === '') {
    throw new InputError(`Invalid ${at}.${key}: must be a non-empty string`);
  }
  return value;
}

function readGlobs(entry: Config, key: string, at: string): string[] | undefined {
  const globs = readStrings(entry, key, at);
  globs?.forEach((glob, i) => {
    if (glob === '' || glob.length > 200) {
      throw new InputError(`Invalid ${at}.${key}[${i}]: a glob of 1 to 200 characters`);
    }
  });
  return globs;
}

function readAnnotations(entry: Config, at: string): Partial<Record<ToolAnnotation, boolean>> {
  const section = entry.getOptionalConfig('annotations');
  if (section === undefined) return {};
  const hints: Partial<Record<ToolAnnotation, boolean>> = {};
  for (const key of section.keys()) {
    if (!(key in TOOL_ANNOTATION_DEFAULTS)) {
      throw new InputError(
        `Invalid ${at}.annotations.${key}: use ${Object.keys(TOOL_ANNOTATION_DEFAULTS).join(', ')}`,
      );
    }
    const value = section.getOptional(key);
    if (typeof value !== 'boolean') {
      throw new InputError(`Invalid ${at}.annotations.${key}: must be true or false`);
    }
    hints[key as ToolAnnotation] = value;
  }
  return hints;
}

function readOverrides(entry: Config, at: string): ReadonlyMap<string, ToolOverride> {
  const section = entry.getOptionalConfig('overrides');
  const overrides = new Map<string, ToolOverride>();
  for (const tool of section?.keys() ?? []) {
    const override = section!.getConfig(tool);
    const where = `${at}.overrides.${tool}`;
    for (const key of override.keys()) {
      if (key !== 'title' && key !== 'description') {
        throw new InputError(`Invalid ${where}.${key}: an override has title and description`);
      }
    }
    const title = readText(override, 'title', where);
    const description = readText(override, 'description', where);
    if (title === undefined && description === undefined) {
      throw new InputError(`Invalid ${where}: give a title, a description or both`);
    }
    overrides.set(tool, {
      ...(title === undefined ? {} : { title }),
      ...(description === undefined ? {} : { description }),
    });
  }
  return overrides;
}
