/*
 * A property-based fuzzer of the broker's MCP endpoint (`/api/mcp-broker/mcp`) in both eras, on
 * the real backend: fast-check generates requests a client could send — JSON-RPC envelopes with
 * ids of every JSON type, known and unknown methods, params of any shape, 2026-07-28 `_meta`
 * envelopes, array (batch-like) bodies, bodies that are not JSON, and the headers of both eras
 * (`MCP-Protocol-Version`, `Mcp-Session-Id` of the caller's session, another person's or none,
 * `Mcp-Method`/`Mcp-Name` agreeing with the body or not, `Last-Event-ID`, `Accept`,
 * `Content-Type`) on POST, GET and DELETE — and checks every answer:
 *
 * - never a 5xx, and always an answer (no hang, no dropped connection);
 * - well-formed: JSON bodies are JSON-RPC messages (an error with an integer code and a message,
 *   or a result), event streams carry JSON-RPC messages, 202/204 carry nothing;
 * - never another person's data: a session of another user, whose client info carries
 *   {@link MCP_FOREIGN_MARKER}, is named in some requests, and no answer may contain the marker.
 *
 * Used by the bounded run in `yarn test` (e2e/fuzzMcpEndpoint.test.ts) and the long run
 * (bench/fuzz.mjs), with a seed and a run count.
 */
import fc from 'fast-check';
import type { BackendProcess } from '../../testing/startBackendProcess';
import { mcpRawPost } from '../../testing/mcpRawPost';
import { startRawMcpSession } from '../../testing/rawMcpSession';
import {
  assertEveryAnswer,
  FuzzAnswer,
  FuzzRequest,
  FuzzRun,
  parsedJson,
  PRINTABLE_ASCII,
} from './fuzzHttp';

/** Marks the other person's session; no answer to the fuzzing user may contain it. */
export const MCP_FOREIGN_MARKER = 'FOREIGN-MCP-SESSION-MARKER-7f3a';

const MCP_PATH = '/api/mcp-broker/mcp';
const LEGACY_VERSION = '2025-11-25';
const MODERN_VERSION = '2026-07-28';

/** What the fuzzer knows of the backend it fuzzes. */
export interface McpFuzzTarget {
  baseUrl: string;
  /** The fuzzing user's token. */
  token: string;
  /** A session of the fuzzing user (2025-11-25). */
  ownSessionId: string;
  /** A session of another user, whose client info holds {@link MCP_FOREIGN_MARKER}. */
  foreignSessionId: string;
  /** Tools that answer at once whatever their arguments (e.g. echo), as the broker names them. */
  quickTools: string[];
}

const KNOWN_METHODS = [
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/roots/list_changed',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'server/discover',
  'subscriptions/listen',
  'sampling/createMessage',
  'elicitation/create',
];

const headerText = fc.string({ unit: fc.constantFrom(...PRINTABLE_ASCII), maxLength: 80 });

/** Ids of every JSON type (and none). */
const jsonRpcId = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 40 }),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
  fc.constant(undefined),
);

function mcpArbitraries(target: McpFuzzTarget) {
  const toolName = fc.oneof(
    fc.constantFrom(...(target.quickTools.length ? target.quickTools : ['echo'])),
    fc.string({ maxLength: 40 }),
  );
  const meta = fc.oneof(
    fc.constant(undefined),
    fc.record(
      {
        'io.modelcontextprotocol/protocolVersion': fc.oneof(
          fc.constantFrom(MODERN_VERSION, LEGACY_VERSION),
          fc.jsonValue(),
        ),
        'io.modelcontextprotocol/clientCapabilities': fc.oneof(fc.constant({}), fc.jsonValue()),
        'io.modelcontextprotocol/clientInfo': fc.oneof(
          fc.constant({ name: 'fuzz', version: '1' }),
          fc.jsonValue(),
        ),
        progressToken: jsonRpcId,
      },
      { requiredKeys: [] },
    ),
  );
  const params = fc.oneof(
    fc.constant(undefined),
    fc.jsonValue({ maxDepth: 4 }),
    fc
      .record(
        {
          name: toolName,
          uri: fc.oneof(fc.webUrl(), fc.string({ maxLength: 40 })),
          arguments: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.record({ message: fc.string() })),
          protocolVersion: fc.oneof(fc.constantFrom(LEGACY_VERSION, MODERN_VERSION), fc.string()),
          capabilities: fc.jsonValue({ maxDepth: 2 }),
          clientInfo: fc.jsonValue({ maxDepth: 2 }),
          cursor: fc.string({ maxLength: 40 }),
          requestId: jsonRpcId,
          level: fc.constantFrom('debug', 'info', 'error', 'nonsense'),
        },
        { requiredKeys: [] },
      )
      .chain(p => meta.map(m => (m === undefined ? p : { ...p, _meta: m }))),
  );
  const members = {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('2.0'), fc.jsonValue({ maxDepth: 1 })),
    id: jsonRpcId,
    method: fc.oneof(fc.constantFrom(...KNOWN_METHODS), fc.string({ maxLength: 30 })),
    params,
    result: fc.jsonValue({ maxDepth: 2 }),
    error: fc.jsonValue({ maxDepth: 2 }),
  };
  // Mostly requests and notifications; also answers, and objects with any members at all.
  const envelope = fc.oneof(
    { weight: 5, arbitrary: fc.record(members, { requiredKeys: ['jsonrpc', 'method'] }) },
    { weight: 1, arbitrary: fc.record(members, { requiredKeys: [] }) },
  );
  const body = fc.oneof(
    { weight: 6, arbitrary: envelope.map(e => JSON.stringify(e)) },
    { weight: 1, arbitrary: fc.array(envelope, { maxLength: 3 }).map(a => JSON.stringify(a)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(v => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constant('') },
  );
  const optionalHeader = (value: fc.Arbitrary<string>) => fc.oneof(fc.constant(undefined), value);
  const headers = fc.record({
    'mcp-protocol-version': optionalHeader(
      fc.oneof(fc.constantFrom(LEGACY_VERSION, MODERN_VERSION, '2025-03-26'), headerText),
    ),
    'mcp-session-id': optionalHeader(
      fc.oneof(
        fc.constantFrom(target.ownSessionId, target.ownSessionId, target.foreignSessionId),
        headerText,
      ),
    ),
    'mcp-method': optionalHeader(fc.oneof(fc.constantFrom(...KNOWN_METHODS), headerText)),
    'mcp-name': optionalHeader(
      fc.oneof(
        toolName.filter(n => /^[\x20-\x7e]*$/.test(n)),
        headerText,
      ),
    ),
    'last-event-id': optionalHeader(
      fc.oneof(
        headerText,
        fc.nat().map(n => `${n}`),
        fc.nat().map(n => `stream-${n}:${n}`),
      ),
    ),
    accept: optionalHeader(
      fc.oneof(
        fc.constantFrom(
          'application/json, text/event-stream',
          'application/json',
          'text/event-stream',
          '*/*',
        ),
        headerText,
      ),
    ),
    'content-type': optionalHeader(
      fc.oneof(
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain'),
        headerText,
      ),
    ),
  });
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constant('POST') },
    { weight: 1, arbitrary: fc.constant('GET') },
    { weight: 1, arbitrary: fc.constant('DELETE') },
  );
  return fc.record({ method, headers, body }).map(({ method: m, headers: h, body: b }) => {
    const sent: Record<string, string> = { authorization: `Bearer ${target.token}` };
    for (const [name, value] of Object.entries(h)) if (value !== undefined) sent[name] = value;
    const request: FuzzRequest = {
      method: m,
      path: MCP_PATH,
      headers: sent,
      ...(m === 'POST' ? { body: b } : {}),
    };
    return request;
  });
}

/** Whether `message` is a JSON-RPC message (request, notification, result or error). */
function isJsonRpcMessage(message: unknown): boolean {
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  if ('error' in m) {
    const error = m.error as Record<string, unknown> | null;
    return (
      error !== null &&
      typeof error === 'object' &&
      Number.isInteger(error.code) &&
      typeof error.message === 'string'
    );
  }
  return 'result' in m || typeof m.method === 'string';
}

/** The reasons `answer` breaks a property, empty when it keeps them all. */
export function mcpAnswerProblems(answer: FuzzAnswer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (answer.text.includes(MCP_FOREIGN_MARKER)) problems.push("another person's session data");
  if (answer.openStream || answer.status === 202 || answer.status === 204) {
    if (answer.status !== 200 && answer.text !== '') problems.push('a body on an empty answer');
    return problems;
  }
  const contentType = answer.headers.get('content-type') ?? '';
  if (contentType.includes('text/event-stream')) {
    const data = answer.text
      .split('\n')
      .filter(line => line.startsWith('data:'))
      .map(line => parsedJson(line.slice(5).trim()));
    if (data.some(d => d === undefined || !isJsonRpcMessage(d.value))) {
      problems.push('an event that is not a JSON-RPC message');
    }
    return problems;
  }
  const json = parsedJson(answer.text);
  if (!json) {
    problems.push('a body that is not JSON');
  } else if (!isJsonRpcMessage(json.value)) {
    problems.push('a JSON body that is not a JSON-RPC message');
  } else if (answer.status >= 400 && !('error' in (json.value as object))) {
    problems.push('an error status without a JSON-RPC error');
  }
  return problems;
}

/** Runs the MCP fuzzer: `numRuns` generated requests from `seed`; throws on the first failure. */
export async function fuzzMcpEndpoint(target: McpFuzzTarget, run: FuzzRun): Promise<void> {
  await assertEveryAnswer(target.baseUrl, mcpArbitraries(target), mcpAnswerProblems, run);
}

/**
 * Seeds `backend` for the MCP fuzzer: a session of alice's (the fuzzing user) and one of carol's
 * whose client info carries {@link MCP_FOREIGN_MARKER}; the quick tools are the echo tools in
 * alice's tools/list.
 */
export async function prepareMcpFuzzTarget(backend: BackendProcess): Promise<McpFuzzTarget> {
  const [alice, carol] = await Promise.all([backend.signIn('alice'), backend.signIn('carol')]);
  const mcpUrl = `${backend.baseUrl}${MCP_PATH}`;
  const own = await startRawMcpSession(mcpUrl, alice);
  const foreign = await mcpRawPost(
    mcpUrl,
    carol,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: MCP_FOREIGN_MARKER, version: MCP_FOREIGN_MARKER },
      },
    },
    { protocolVersion: LEGACY_VERSION },
  );
  await foreign.text();
  const foreignSessionId = foreign.headers.get('mcp-session-id');
  if (foreign.status !== 200 || foreignSessionId === null) {
    throw new Error(`carol's initialize answered ${foreign.status}`);
  }
  const tools = await own.request('tools/list', {});
  const names: string[] = (tools.response?.result?.tools ?? []).map(
    (t: { name: string }) => t.name,
  );
  return {
    baseUrl: backend.baseUrl,
    token: alice,
    ownSessionId: own.sessionId,
    foreignSessionId,
    quickTools: names.filter(name => /echo/.test(name)),
  };
}
