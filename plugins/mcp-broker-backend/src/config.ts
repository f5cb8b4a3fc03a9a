/*
 * The broker's configuration, read once at start-up into typed objects. Every problem is an
 * InputError naming the offending key, so a bad entry fails start-up with a message that says
 * what to fix.
 */
import { Config, readDurationFromConfig } from '@backstage/config';
import { isPinningMode, PINNING_MODES, type PinningMode } from './pinning/ToolPins';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';
import { CREDENTIAL_HEADERS } from './identity/BackendCredentialProvider';
import { parseServerAuth, ServerAuthError, type ServerAuth } from './identity/serverAuth';
import { readCredentialProfiles, type CredentialProfile } from './identity/credentialProfiles';
import type { ServerSource } from './identity/serverIdentity';
import { normalizeOwnerRef } from './entityRef';
import { MCP_SERVER_NAME_PATTERN } from '@devportal/plugin-mcp-broker-common';

/** Where a backend server entry came from (shown on the status endpoint). */
export type { ServerSource } from './identity/serverIdentity';

/** One backend MCP server the broker aggregates. */
export interface BrokerServerConfig {
  /** Unique name, `[a-z0-9-]+`. */
  readonly name: string;
  /** The server's streamable-HTTP endpoint. */
  readonly url: string;
  /** Prefix of this server's tool and prompt names (default `<name>_`, may be `''`). */
  readonly toolPrefix: string;
  /** The broker's own credentials and other headers for this server (secret). */
  readonly headers: Readonly<Record<string, string>>;
  /** Where the entry came from; absent means `{ type: 'config' }`. */
  readonly source?: ServerSource;
  /**
   * Which credential a person's calls present (spec §11); absent means `broker` (the static
   * `headers` for everyone). Secret members: never log them.
   */
  readonly auth?: ServerAuth;
  /**
   * The `headers` the admin marked as not credentials (e.g. a tenant header): in a person's mode
   * (spec §11.1) the only static headers their requests carry. Absent: none.
   */
  readonly nonCredentialHeaders?: readonly string[];
  /**
   * How its tool definitions are pinned (spec §13); absent: `mcpBroker.toolPinning.mode`.
   * Only an admin's config sets it: a Kubernetes registration gets the default.
   */
  readonly pinning?: PinningMode;
  /**
   * The server's owner, a normalised group or user entity ref (contract mcp-access §2.4): from
   * `servers[].owner`; absent when none is named (the catalog then uses its default owner).
   */
  readonly owner?: string;
}

/** Host/Origin checks on the client endpoint (DNS rebinding protection). */
export interface DnsRebindingProtectionConfig {
  readonly enabled: boolean;
  /** Host names (without port, lower case) accepted in the `Host` header. */
  readonly allowedHosts: ReadonlySet<string>;
  /** Origins (`scheme://host[:port]`) accepted in the `Origin` header, when one is sent. */
  readonly allowedOrigins: ReadonlySet<string>;
}

/** Bounds of what the broker accepts from one backend server (`mcpBroker.backendLimits`). */
export interface BackendLimitsConfig {
  /** Most items kept of each list (tools, resources, templates, prompts) of one server. */
  readonly maxListItems: number;
  /** Most pages requested when reading one list of one server. */
  readonly maxListPages: number;
}

/** Long-running tasks relayed through the broker (`mcpBroker.tasks`, contract tasks-and-apps §5). */
export interface TasksConfig {
  /** false: tasks are not relayed (the tasks capability and extension are removed). */
  readonly enabled: boolean;
  /** Most open tasks per person, across all replicas. */
  readonly perPerson: number;
  /** Cap on a task's lifetime at the broker. */
  readonly maxTtlMs: number;
  /** Floor of the broker's own polling of a backend's task. */
  readonly minPollIntervalMs: number;
  /** Largest result held for a task the broker made itself. */
  readonly maxStoredResultBytes: number;
}

/** The broker's whole configuration, with defaults applied. Durations are in milliseconds. */
export interface BrokerConfig {
  readonly servers: readonly BrokerServerConfig[];
  /** What Kubernetes registrations may ask for (spec §11.1), by profile name. */
  readonly credentialProfiles: ReadonlyMap<string, CredentialProfile>;
  readonly elicitationTtlMs: number;
  readonly toolCallTimeoutMs: number;
  readonly reconnect: { readonly initialDelayMs: number; readonly maxDelayMs: number };
  readonly keepAliveMs: number;
  /** Re-listing interval for backends without an event stream (GET answered 405). */
  readonly pollIntervalMs: number;
  /** Timeout of every request the broker sends to a backend (other than tool calls). */
  readonly requestTimeoutMs: number;
  /**
   * Longest wait for a backend's event connection to open (a GET stream's response headers, a
   * `subscriptions/listen` acknowledgement); capped by `requestTimeoutMs` where it is used.
   */
  readonly eventStreamOpenTimeoutMs: number;
  /** Minimum spacing of list_changed notifications of one kind to clients. */
  readonly coalesceWindowMs: number;
  /** A client session without any request or open stream for this long is ended. */
  readonly sessionIdleTimeoutMs: number;
  /** Bytes that may queue on one client stream before the client is disconnected as too slow. */
  readonly clientStreamBufferBytes: number;
  /** Largest request body a client may send (413 beyond, on the declared length at once). */
  readonly maxRequestBodyBytes: number;
  /** Longest a request body may take to arrive (408 after). */
  readonly requestBodyTimeoutMs: number;
  /** On shutdown, how long calls in flight may still finish before they are answered "retry". */
  readonly shutdownDrainTimeoutMs: number;
  /** Most client sessions per principal (all replicas) and per replica. */
  readonly sessionLimits: { readonly perPrincipal: number; readonly perReplica: number };
  /** Longest time a principal's permission decision is used (at most 30 s, spec §8). */
  readonly permissionDecisionMaxAgeMs: number;
  /**
   * `ttlMs` of the lists and `server/discover` answered to 2026-07-28 clients when no backend
   * gives a smaller non-zero one (0 = stale at once).
   */
  readonly listTtlMs: number;
  /** Bounds of what the broker accepts from one backend server. */
  readonly backendLimits: BackendLimitsConfig;
  readonly dnsRebindingProtection: DnsRebindingProtectionConfig;
  readonly tasks: TasksConfig;
}

/** Defaults, with their units in the names. */
export const DEFAULT_ELICITATION_TTL_MS = 10 * 60_000;
export const DEFAULT_TOOL_CALL_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_RECONNECT_INITIAL_DELAY_MS = 500;
export const DEFAULT_RECONNECT_MAX_DELAY_MS = 30_000;
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
export const DEFAULT_POLL_INTERVAL_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Servers send a stream's headers (or acknowledge a listen) at once, so one that has not within
 * a few seconds is broken, and the backend must not look `connected` without events meanwhile.
 */
export const DEFAULT_EVENT_STREAM_OPEN_TIMEOUT_MS = 5_000;
export const DEFAULT_COALESCE_WINDOW_MS = 250;
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 60 * 60_000;
export const DEFAULT_CLIENT_STREAM_BUFFER_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
export const DEFAULT_REQUEST_BODY_TIMEOUT_MS = 30_000;
export const DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL = 32;
export const DEFAULT_MAX_SESSIONS_PER_REPLICA = 5_000;
export const DEFAULT_TASKS_PER_PERSON = 64;
export const DEFAULT_TASK_MAX_TTL_MS = 24 * 60 * 60_000;
export const DEFAULT_TASK_MIN_POLL_INTERVAL_MS = 1_000;
export const DEFAULT_TASK_MAX_STORED_RESULT_BYTES = 1024 * 1024;
/**
 * `ttlMs` of lists for 2026-07-28 clients: as long as a permission decision may be reused, so a
 * cached list is never staler than the decisions behind it (change events come over listen).
 */
export const DEFAULT_LIST_TTL_MS = 30_000;
/**
 * Items kept of one list of one server: far more than a model can choose from, few enough that
 * a server listing 10,000+ tools costs a bounded amount of memory and permission checks.
 */
export const DEFAULT_MAX_LIST_ITEMS = 1_000;
/** Pages requested for one list: a cursor that never ends costs at most this many requests. */
export const DEFAULT_MAX_LIST_PAGES = 50;
/** Also the largest allowed value: a policy change must land within 30 s. */
export const MAX_PERMISSION_DECISION_AGE_MS = 30_000;

/** The one definition of a server name, shared with the REST contract's path parameters. */
const SERVER_NAME = MCP_SERVER_NAME_PATTERN;
const TOOL_PREFIX = /^[A-Za-z0-9_.-]*$/;

/** True for a valid server name (`[a-z0-9-]+`). */
export function isValidServerName(name: string): boolean {
  return SERVER_NAME.test(name);
}

/** True for a valid tool prefix (letters, digits, `_`, `.`, `-`; may be empty). */
export function isValidToolPrefix(prefix: string): boolean {
  return TOOL_PREFIX.test(prefix);
}
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the broker sets itself on backend requests; configuring them would break the protocol. */
const RESERVED_HEADERS = new Set([
  'mcp-session-id',
  'mcp-protocol-version',
  'content-type',
  'accept',
  'content-length',
  'host',
  'last-event-id',
]);

/**
 * Reads the duration at `key` of `config` in milliseconds (`fallbackMs` when absent), at least
 * `minimumMs`; `fullKey` names it in the InputError of an invalid value.
 */
export function readOptionalDurationMs(
  config: Config,
  key: string,
  fullKey: string,
  fallbackMs: number,
  minimumMs = 1,
): number {
  if (!config.has(key)) return fallbackMs;
  let ms: number;
  try {
    ms = durationToMilliseconds(readDurationFromConfig(config, { key }));
  } catch (error) {
    throw new InputError(
      `Invalid duration at ${fullKey}: ${(error as Error).message}. Use e.g. { seconds: 30 } or "30s"`,
    );
  }
  if (!Number.isFinite(ms) || ms < minimumMs) {
    throw new InputError(`Invalid duration at ${fullKey}: must be at least ${minimumMs} ms`);
  }
  return ms;
}

function readServer(entry: Config, index: number): BrokerServerConfig {
  const at = `mcpBroker.servers[${index}]`;
  const name = entry.getString('name');
  if (!SERVER_NAME.test(name)) {
    throw new InputError(`Invalid ${at}.name "${name}": use lower-case letters, digits and "-"`);
  }
  const rawUrl = entry.getString('url');
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new InputError(`Invalid ${at}.url: "${rawUrl}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(`Invalid ${at}.url: only http and https are supported`);
  }
  // getOptionalString rejects "" (Backstage treats it as unset-but-present), yet "" is a legal
  // prefix: read the raw value and check its type here.
  const rawPrefix = entry.getOptional('toolPrefix');
  if (rawPrefix !== undefined && typeof rawPrefix !== 'string') {
    throw new InputError(`Invalid ${at}.toolPrefix: must be a string ("" for no prefix)`);
  }
  const toolPrefix = rawPrefix ?? `${name}_`;
  if (!TOOL_PREFIX.test(toolPrefix)) {
    throw new InputError(
      `Invalid ${at}.toolPrefix "${toolPrefix}": use letters, digits, "_", "." or "-"`,
    );
  }
  const headers: Record<string, string> = {};
  const headersConfig = entry.getOptionalConfig('headers');
  for (const key of headersConfig?.keys() ?? []) {
    if (!HEADER_NAME.test(key) || RESERVED_HEADERS.has(key.toLowerCase())) {
      throw new InputError(`Invalid ${at}.headers.${key}: not an allowed header name`);
    }
    const value = headersConfig!.getString(key);
    if (/[\r\n]/.test(value)) {
      throw new InputError(`Invalid ${at}.headers.${key}: header values must be one line`);
    }
    headers[key] = value;
  }
  const auth = readServerAuth(entry, at);
  const nonCredentialHeaders = readNonCredentialHeaders(entry, at, headers);
  const pinning = entry.getOptionalString('pinning');
  if (pinning !== undefined && !isPinningMode(pinning)) {
    throw new InputError(`Invalid ${at}.pinning "${pinning}": use ${PINNING_MODES.join(', ')}`);
  }
  const owner = readOwner(entry, at);
  return {
    name,
    url: url.toString(),
    toolPrefix,
    headers,
    source: { type: 'config' },
    ...(auth.mode === 'broker' ? {} : { auth }),
    ...(nonCredentialHeaders === undefined ? {} : { nonCredentialHeaders }),
    ...(pinning === undefined ? {} : { pinning }),
    ...(owner === undefined ? {} : { owner }),
  };
}

/** `servers[].owner`: a group or user entity ref; anything else fails start-up naming the key. */
function readOwner(entry: Config, at: string): string | undefined {
  const value = entry.getOptionalString('owner');
  if (value === undefined) return undefined;
  const owner = normalizeOwnerRef(value);
  if (owner === undefined) {
    throw new InputError(
      `Invalid ${at}.owner "${value.slice(0, 100)}": use a group or user entity ref such as group:default/payments-team`,
    );
  }
  return owner;
}

/**
 * `servers[].nonCredentialHeaders`: names of `headers` that are not credentials. A name that
 * `headers` does not set (a typo would silently drop the header) or that is a credential by
 * definition (`Authorization`, `Proxy-Authorization`, `Cookie`) fails start-up.
 */
function readNonCredentialHeaders(
  entry: Config,
  at: string,
  headers: Readonly<Record<string, string>>,
): readonly string[] | undefined {
  const names = entry.getOptionalStringArray('nonCredentialHeaders');
  if (names === undefined) return undefined;
  const set = new Set(Object.keys(headers).map(name => name.toLowerCase()));
  for (const name of names) {
    if (CREDENTIAL_HEADERS.has(name.toLowerCase())) {
      throw new InputError(
        `Invalid ${at}.nonCredentialHeaders: ${name} is a credential; a person's request never carries the broker's`,
      );
    }
    if (!set.has(name.toLowerCase())) {
      throw new InputError(
        `Invalid ${at}.nonCredentialHeaders: ${name.slice(0, 100)} is not one of the server's headers`,
      );
    }
  }
  return names;
}

function readServerAuth(entry: Config, at: string): ServerAuth {
  try {
    return parseServerAuth(entry.getOptional('auth'), `${at}.auth`);
  } catch (error) {
    if (error instanceof ServerAuthError) throw new InputError(error.message);
    throw error;
  }
}

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function readDnsRebindingProtection(
  root: Config,
  broker: Config | undefined,
): DnsRebindingProtectionConfig {
  const section = broker?.getOptionalConfig('dnsRebindingProtection');
  const backendBaseUrl = root.getOptionalString('backend.baseUrl');
  const appBaseUrl = root.getOptionalString('app.baseUrl');
  // By default accept the names this backend is known by, plus loopback names for local tools.
  const defaultHosts = ['localhost', '127.0.0.1', '[::1]', hostOf(backendBaseUrl)].filter(
    (h): h is string => h !== undefined,
  );
  const defaultOrigins = [originOf(backendBaseUrl), originOf(appBaseUrl)].filter(
    (o): o is string => o !== undefined,
  );
  const allowedHosts = section?.getOptionalStringArray('allowedHosts')?.map(h => h.toLowerCase());
  const allowedOrigins = section?.getOptionalStringArray('allowedOrigins');
  for (const [i, origin] of (allowedOrigins ?? []).entries()) {
    if (originOf(origin) !== origin) {
      throw new InputError(
        `Invalid mcpBroker.dnsRebindingProtection.allowedOrigins[${i}] "${origin}": write it as scheme://host[:port]`,
      );
    }
  }
  return {
    enabled: section?.getOptionalBoolean('enabled') ?? true,
    allowedHosts: new Set(allowedHosts ?? defaultHosts),
    allowedOrigins: new Set(allowedOrigins ?? defaultOrigins),
  };
}

/**
 * Reads and validates the broker's configuration (`mcpBroker.*`) from the root config.
 * Throws an InputError that names the key of the first invalid entry.
 */
export function readBrokerConfig(root: Config): BrokerConfig {
  const broker = root.getOptionalConfig('mcpBroker');
  const servers = (broker?.getOptionalConfigArray('servers') ?? []).map(readServer);
  const seen = new Set<string>();
  for (const [i, server] of servers.entries()) {
    if (seen.has(server.name)) {
      throw new InputError(`Invalid mcpBroker.servers[${i}].name: "${server.name}" is used twice`);
    }
    seen.add(server.name);
  }
  const duration = (key: string, fallbackMs: number, minimumMs?: number) =>
    broker
      ? readOptionalDurationMs(broker, key, `mcpBroker.${key}`, fallbackMs, minimumMs)
      : fallbackMs;

  const initialDelayMs = duration('reconnect.initialDelay', DEFAULT_RECONNECT_INITIAL_DELAY_MS);
  const maxDelayMs = duration('reconnect.maxDelay', DEFAULT_RECONNECT_MAX_DELAY_MS);
  if (maxDelayMs < initialDelayMs) {
    throw new InputError(
      'Invalid mcpBroker.reconnect.maxDelay: must not be shorter than initialDelay',
    );
  }
  const positiveInteger = (key: string, fallback: number) => {
    const value = broker?.getOptionalNumber(key) ?? fallback;
    if (!Number.isInteger(value) || value < 1) {
      throw new InputError(`Invalid mcpBroker.${key}: must be a positive integer`);
    }
    return value;
  };
  const permissionDecisionMaxAgeMs = duration(
    'permissionDecisionMaxAge',
    MAX_PERMISSION_DECISION_AGE_MS,
  );
  if (permissionDecisionMaxAgeMs > MAX_PERMISSION_DECISION_AGE_MS) {
    throw new InputError('Invalid mcpBroker.permissionDecisionMaxAge: must be at most 30 seconds');
  }
  return {
    servers,
    credentialProfiles: readCredentialProfiles(broker),
    elicitationTtlMs: duration('elicitationTtl', DEFAULT_ELICITATION_TTL_MS),
    toolCallTimeoutMs: duration('toolCallTimeout', DEFAULT_TOOL_CALL_TIMEOUT_MS),
    reconnect: { initialDelayMs, maxDelayMs },
    keepAliveMs: duration('keepAlive', DEFAULT_KEEP_ALIVE_MS, 10),
    pollIntervalMs: duration('pollInterval', DEFAULT_POLL_INTERVAL_MS, 10),
    requestTimeoutMs: duration('requestTimeout', DEFAULT_REQUEST_TIMEOUT_MS),
    eventStreamOpenTimeoutMs: duration(
      'eventStreamOpenTimeout',
      DEFAULT_EVENT_STREAM_OPEN_TIMEOUT_MS,
    ),
    coalesceWindowMs: duration('coalesceWindow', DEFAULT_COALESCE_WINDOW_MS, 0),
    sessionIdleTimeoutMs: duration('sessionIdleTimeout', DEFAULT_SESSION_IDLE_TIMEOUT_MS, 1000),
    clientStreamBufferBytes: positiveInteger(
      'clientStreamBufferBytes',
      DEFAULT_CLIENT_STREAM_BUFFER_BYTES,
    ),
    maxRequestBodyBytes: positiveInteger('maxRequestBodyBytes', DEFAULT_MAX_REQUEST_BODY_BYTES),
    requestBodyTimeoutMs: duration('requestBodyTimeout', DEFAULT_REQUEST_BODY_TIMEOUT_MS),
    sessionLimits: {
      perPrincipal: positiveInteger(
        'sessionLimits.perPrincipal',
        DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
      ),
      perReplica: positiveInteger('sessionLimits.perReplica', DEFAULT_MAX_SESSIONS_PER_REPLICA),
    },
    shutdownDrainTimeoutMs: duration('shutdownDrainTimeout', DEFAULT_SHUTDOWN_DRAIN_TIMEOUT_MS, 0),
    permissionDecisionMaxAgeMs,
    listTtlMs: duration('listTtl', DEFAULT_LIST_TTL_MS, 0),
    backendLimits: {
      maxListItems: positiveInteger('backendLimits.maxListItems', DEFAULT_MAX_LIST_ITEMS),
      maxListPages: positiveInteger('backendLimits.maxListPages', DEFAULT_MAX_LIST_PAGES),
    },
    dnsRebindingProtection: readDnsRebindingProtection(root, broker),
    tasks: {
      enabled: broker?.getOptionalBoolean('tasks.enabled') ?? true,
      perPerson: positiveInteger('tasks.perPerson', DEFAULT_TASKS_PER_PERSON),
      maxTtlMs: duration('tasks.maxTtl', DEFAULT_TASK_MAX_TTL_MS, 1000),
      minPollIntervalMs: duration('tasks.minPollInterval', DEFAULT_TASK_MIN_POLL_INTERVAL_MS, 10),
      maxStoredResultBytes: positiveInteger(
        'tasks.maxStoredResultBytes',
        DEFAULT_TASK_MAX_STORED_RESULT_BYTES,
      ),
    },
  };
}
