/*
 * The broker's MCP methods, one entry each: the protocol eras that have it, the handler that
 * serves it, the permission that guards it, whether each request is an audit event, where its
 * item lives (its route in the principal's permitted catalog) and how its answer may be given.
 * The request pipeline (mcpEndpoint.ts) reads this table and nothing else to know a method: a
 * new MCP method is one entry here.
 *
 * Permissions (spec §8): `mcp-broker.session.create` guards `initialize` and every 2026-07-28
 * request (the admission chain checks it); the item permissions (tool.use, prompt.use,
 * resource.read) are applied by the permitted catalog the route is resolved in, so an item the
 * principal may not use answers like one that exists nowhere.
 *
 * Limits (spec §11.1, §12): a method that reaches a backend on a person's behalf (with their
 * credential, or triggering an exchange for it) is `limited`: the rate limits count it unless
 * `mcpBroker.rateLimits.methods` leaves it out.
 */
import { InputError } from '@backstage/errors';
import type { BasicPermission, ResourcePermission } from '@backstage/plugin-permission-common';
import {
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
  mcpBrokerSessionCreatePermission,
  mcpBrokerToolUsePermission,
} from '@devportal/plugin-mcp-broker-common';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { ProtocolEra } from '../protocol/modernEra';
import { callTool, viaInputCapableBackend, viaPersonalCredential } from './callMethods';
import type { CredentialStep } from './credentialStep';
import {
  complete,
  completionRoute,
  discover,
  getPrompt,
  list,
  ping,
  promptRoute,
  readResource,
  resourceRoute,
} from './catalogMethods';
import { serveListen } from './listenEndpoint';
import type { McpRequest, McpRoute } from './mcpRequest';
import { initialize, unsupported } from './sessionMethods';

/** How a method's answer may be given (see ResponseWriter). */
export type AnswerKind =
  /** The router answers with one JSON document. */
  | 'json'
  /**
   * A call: the answer streams when the backend sends more than its result; a session's
   * `tools/call` is always a stream (spec §4).
   */
  | 'call';

/** One MCP method; see the file comment. */
export interface MethodEntry {
  /** The protocol eras that have the method (any other era answers "method not found"). */
  readonly eras: readonly ProtocolEra[];
  /** Serves one admitted request (and answers it through its writer). */
  readonly handler: (request: McpRequest) => Promise<void>;
  /** The permission that guards the method (see the file comment). */
  readonly permission?: BasicPermission | ResourcePermission;
  /** `tool-call`: every request is one `mcp-broker.tool-call` audit event. */
  readonly audit?: 'tool-call';
  /** Where the method's item lives, in the principal's permitted catalog. */
  readonly route?: (
    catalog: PermittedCatalog,
    params: Record<string, unknown>,
  ) => McpRoute | undefined;
  /** How the answer may be given; default `json`. */
  readonly answer?: AnswerKind;
  /** `initialize`: the request opens a session (it must come without one). */
  readonly opensSession?: true;
  /**
   * The request reaches a backend on the person's behalf: counted by the rate limits (spec §12),
   * unless `mcpBroker.rateLimits.methods` leaves the method out.
   */
  readonly limited?: true;
}

const BOTH: readonly ProtocolEra[] = ['legacy', 'modern'];
const SESSION_ERA: readonly ProtocolEra[] = ['legacy'];
const MODERN_ERA: readonly ProtocolEra[] = ['modern'];

/** The broker's method table (handlers bound to the broker and its auditor). */
export function createMethodTable(deps: {
  broker: McpBroker;
  toolCallAuditor: ToolCallAuditor;
  /** The credential step of a person's requests (spec §11). */
  credentialStep?: CredentialStep;
}): ReadonlyMap<string, MethodEntry> {
  const { broker, toolCallAuditor, credentialStep } = deps;
  const entries: Record<string, MethodEntry> = {
    initialize: {
      eras: SESSION_ERA,
      handler: initialize(broker),
      permission: mcpBrokerSessionCreatePermission,
      opensSession: true,
    },
    ping: { eras: SESSION_ERA, handler: ping },
    'server/discover': { eras: MODERN_ERA, handler: discover(broker) },
    'tools/list': {
      eras: BOTH,
      handler: list(broker, 'tools'),
      permission: mcpBrokerToolUsePermission,
    },
    'prompts/list': {
      eras: BOTH,
      handler: list(broker, 'prompts'),
      permission: mcpBrokerPromptUsePermission,
    },
    'resources/list': {
      eras: BOTH,
      handler: list(broker, 'resources'),
      permission: mcpBrokerResourceReadPermission,
    },
    'resources/templates/list': {
      eras: BOTH,
      handler: list(broker, 'resourceTemplates'),
      permission: mcpBrokerResourceReadPermission,
    },
    'tools/call': {
      eras: BOTH,
      handler: callTool(broker, toolCallAuditor, credentialStep),
      permission: mcpBrokerToolUsePermission,
      audit: 'tool-call',
      limited: true,
      route: (catalog, params) => {
        const route = typeof params.name === 'string' ? catalog.routeTool(params.name) : undefined;
        return (
          route && {
            backend: route.backend,
            name: route.originalName,
            ...(route.paramHeaders === undefined ? {} : { paramHeaders: route.paramHeaders }),
          }
        );
      },
      answer: 'call',
    },
    // A 2026-07-28 backend may answer these with input_required: the call machinery serves them
    // then, and for a server that acts with each person's identity (spec §11); everything else
    // goes over the broker's own connection.
    'prompts/get': {
      eras: BOTH,
      handler: viaInputCapableBackend(broker, getPrompt(broker), credentialStep),
      permission: mcpBrokerPromptUsePermission,
      route: promptRoute,
      limited: true,
      answer: 'call',
    },
    'resources/read': {
      eras: BOTH,
      handler: viaInputCapableBackend(broker, readResource(broker), credentialStep),
      permission: mcpBrokerResourceReadPermission,
      route: resourceRoute,
      limited: true,
      answer: 'call',
    },
    'completion/complete': {
      eras: BOTH,
      handler: viaPersonalCredential(broker, complete(broker), credentialStep),
      route: completionRoute,
      limited: true,
    },
    'subscriptions/listen': { eras: MODERN_ERA, handler: serveListen(broker) },
    // Deliberately not served: the broker relays neither log levels nor resource subscriptions.
    'logging/setLevel': { eras: SESSION_ERA, handler: unsupported },
    'resources/subscribe': { eras: SESSION_ERA, handler: unsupported },
    'resources/unsubscribe': { eras: SESSION_ERA, handler: unsupported },
  };
  return new Map(Object.entries(entries));
}

/**
 * Checks `mcpBroker.rateLimits.methods` against the table: every method named must be one the
 * table marks `limited` (a typo would otherwise silently limit nothing). Throws an InputError.
 */
export function checkLimitedMethods(
  table: ReadonlyMap<string, MethodEntry>,
  methods: readonly string[] | undefined,
): void {
  const limited = [...table].filter(([, entry]) => entry.limited).map(([name]) => name);
  for (const method of methods ?? []) {
    if (!limited.includes(method)) {
      throw new InputError(
        `Invalid mcpBroker.rateLimits.methods: "${method.slice(0, 100)}" is not a method that reaches a server on a person's behalf; use some of ${limited.join(', ')}`,
      );
    }
  }
}

/** The entry of `method` in `era`, if the broker serves it there. */
export function methodOf(
  table: ReadonlyMap<string, MethodEntry>,
  method: string,
  era: ProtocolEra,
): MethodEntry | undefined {
  const entry = table.get(method);
  return entry !== undefined && entry.eras.includes(era) ? entry : undefined;
}
