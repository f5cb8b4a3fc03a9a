/*
 * The handlers of the broker's MCP methods: for every client request the method table
 * (protocol/mcpMethods.ts, the only place a method is described: eras, params, permission,
 * credential, limits, audit, answer, telemetry) serves, the handler that serves it and where its
 * item lives (its route in the principal's permitted catalog). The request pipeline
 * (mcpEndpoint.ts) reads the entries made here and nothing else to know a method: a new MCP
 * method is one entry in the table and its handler here.
 */
import { InputError } from '@backstage/errors';
import type { ToolCallAuditor } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import {
  type ClientRequestMethod,
  clientRequestMethod,
  clientRequestMethods,
} from '../protocol/mcpMethods';
import type { ProtocolEra } from '../protocol/modernEra';
import { resolveAppTool, routeOf } from './appCallRoutes';
import { callTool, viaInputCapableBackend, viaPersonalCredential } from './callMethods';
import type { CredentialStep } from './credentialStep';
import { declaresUi } from './declaresUi';
import {
  complete,
  completionRoute,
  discover,
  getPrompt,
  list,
  ping,
  promptRoute,
  readResource,
  resourceOrAppRoute,
} from './catalogMethods';
import { serveListen } from './listenEndpoint';
import type { McpRequest, McpRoute } from './mcpRequest';
import type { PrincipalAccessDeps } from './principalAccess';
import { initialize, unsupported } from './sessionMethods';
import { byClientEra, listTasks, modernTaskOperation, taskOperation } from './taskMethods';

/** How a method's answer may be given (see ResponseWriter). */
export type AnswerKind = ClientRequestMethod['answer'];

/** One MCP method the broker serves: its description in the method table, and its handler. */
export interface MethodEntry extends ClientRequestMethod {
  /** Serves one admitted request (and answers it through its writer). */
  readonly handler: (request: McpRequest) => Promise<void>;
  /** Where the method's item lives, in the principal's permitted catalog. */
  readonly route?: (
    catalog: PermittedCatalog,
    params: Record<string, unknown>,
    request: McpRequest,
  ) => McpRoute | undefined;
}

/** What the router adds to a method of the table. */
type MethodHandler = Pick<MethodEntry, 'handler' | 'route'>;

/** The methods of both eras' tasks (absent from the table with tasks off). */
const TASK_METHODS: ReadonlySet<string> = new Set([
  'tasks/get',
  'tasks/result',
  'tasks/update',
  'tasks/cancel',
  'tasks/list',
]);

/** The broker's method table (handlers bound to the broker and its auditor). */
export function createMethodTable(deps: {
  broker: McpBroker;
  /** The permission decisions of a listen stream's task notifications (contract §2.10). */
  access: PrincipalAccessDeps['access'];
  httpAuth: PrincipalAccessDeps['httpAuth'];
  toolCallAuditor: ToolCallAuditor;
  /** The credential step of a person's requests (spec §11). */
  credentialStep?: CredentialStep;
}): ReadonlyMap<string, MethodEntry> {
  const { broker, toolCallAuditor } = deps;
  // The credential step only where the table says a person's credential is presented.
  const stepOf = (method: string): CredentialStep | undefined =>
    clientRequestMethod(method)?.personalCredential ? deps.credentialStep : undefined;
  const handlers: Record<string, MethodHandler> = {
    initialize: { handler: initialize(broker) },
    ping: { handler: ping },
    'server/discover': { handler: discover(broker) },
    'tools/list': { handler: list(broker, 'tools') },
    'prompts/list': { handler: list(broker, 'prompts') },
    'resources/list': { handler: list(broker, 'resources') },
    'resources/templates/list': { handler: list(broker, 'resourceTemplates') },
    'tools/call': {
      handler: callTool(broker, toolCallAuditor, stepOf('tools/call')),
      route: (catalog, params, request) => {
        const route = typeof params.name === 'string' ? catalog.routeTool(params.name) : undefined;
        if (route === undefined) {
          // An app's call by its server's own name; only hosts proxy app calls (contract §3.6).
          return typeof params.name === 'string' && declaresUi(request)
            ? routeOf(resolveAppTool(catalog, params.name, params))
            : undefined;
        }
        return {
          backend: route.backend,
          name: route.originalName,
          ...(route.paramHeaders === undefined ? {} : { paramHeaders: route.paramHeaders }),
        };
      },
    },
    // A 2026-07-28 backend may answer these with input_required: the call machinery serves them
    // then, and for a server that acts with each person's identity (spec §11); everything else
    // goes over the broker's own connection.
    'prompts/get': {
      handler: viaInputCapableBackend(broker, getPrompt(broker), stepOf('prompts/get')),
      route: promptRoute,
    },
    'resources/read': {
      handler: viaInputCapableBackend(broker, readResource(broker), stepOf('resources/read')),
      route: (catalog, params, request) => resourceOrAppRoute(catalog, params.uri, params, request),
    },
    'completion/complete': {
      handler: viaPersonalCredential(broker, complete(broker), stepOf('completion/complete')),
      route: completionRoute,
    },
    'subscriptions/listen': { handler: serveListen(deps) },
    'tasks/get': {
      handler: byClientEra(taskOperation(broker, 'get'), modernTaskOperation(broker, 'get')),
    },
    'tasks/result': { handler: taskOperation(broker, 'result') },
    'tasks/update': { handler: modernTaskOperation(broker, 'update') },
    'tasks/cancel': {
      handler: byClientEra(taskOperation(broker, 'cancel'), modernTaskOperation(broker, 'cancel')),
    },
    'tasks/list': { handler: listTasks(broker) },
    // Deliberately not served: the broker relays neither log levels nor resource subscriptions.
    'logging/setLevel': { handler: unsupported },
    'resources/subscribe': { handler: unsupported },
    'resources/unsubscribe': { handler: unsupported },
  };
  // With tasks switched off the tasks/* methods do not exist (contract tasks-and-apps §2.13 E5):
  // method not found for any of them, before their params are looked at.
  const served = clientRequestMethods().filter(
    ([name]) => broker.config?.tasks?.enabled !== false || !TASK_METHODS.has(name),
  );
  return new Map(
    served.map(([name, method]) => {
      const bound = handlers[name];
      if (bound === undefined) throw new Error(`no handler for the MCP method ${name}`);
      return [name, { ...method, ...bound }];
    }),
  );
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
