#!/usr/bin/env node
/*
 * Sums a V8 CPU profile (.cpuprofile) of the backend serving MCP tool calls through the broker:
 *   1. per component of the call path (Backstage's middleware, our router, the backend
 *      transport, SSE writing, ...): each busy sample goes to the innermost frame on its stack
 *      that belongs to a named component, so Node internals and native code (JSON.parse, socket
 *      writes) count for the code that called them. Pass-through wrappers (compression's
 *      res.write/res.end, on-headers' res.writeHead) are skipped, so a write counts for its
 *      writer. Samples without a component frame go to the side of Node's HTTP stack on their
 *      stack (server: the client's requests; client: the broker's requests to the backend), or
 *      to what their innermost frame is (garbage collection, native code);
 *   2. per package and per function, self and inclusive time (bench/lib/profileTables.mjs).
 * With --calls N every figure is also shown per call. Only the profiled thread (the main one)
 * is in a profile: CPU of other threads (GC helpers, libuv) is not. Stacks end at an `await`, so
 * a continuation counts for the code that resumes, not for its original caller.
 *
 *   node bench/profileSummary.mjs broker.cpuprofile --calls 5000 [--top 25]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuByPackage, packageOf } from './lib/profileTables.mjs';
import { markdownTable } from './lib/stats.mjs';

const BROKER = 'repo:plugins/mcp-broker-backend';
const SSE_WRITING = 'SSE writing to the client';
const BODY_READING = 'broker router: request body reading and JSON.parse';

/** The broker plugin's source files, by component (the file's path under src/). */
const BROKER_FILES = [
  [/router\/requestBody/, BODY_READING],
  [/protocol\/jsonDepth/, 'broker router: JSON depth check'],
  [/protocol\/jsonRpcMessage/, 'backend messages: JSON.parse, raw id scan, classification'],
  [/protocol\/jsonRpc/, 'broker router: JSON-RPC validation'],
  [/router\/(sseClientStream|SseClientStream)/, SSE_WRITING],
  [/router\/ResponseWriter/, 'broker router: the response writer (JSON.stringify)'],
  [
    /router\/(requirePrincipal|VerifiedPrincipalCache|principalAccess)/,
    'broker auth (token cache)',
  ],
  [
    /router\/callEndSignal|(upstream|backend)\/requestSignal/,
    'broker router: call end signal (linked signals)',
  ],
  [/router\//, 'broker router: dispatch, guards'],
  [/sessions\/|store\//, 'session store'],
  [/permissions\//, 'permission checks'],
  [/audit\//, 'audit trail: ours (ToolCallAuditor)'],
  [
    /upstream\/|backend\/(HttpBackendTransport|httpExchange|readBackendMessages|abortError|sseReader|backendTransport)/,
    'backend transport (HTTP exchange, SSE reading)',
  ],
  [/backend\//, 'backend channels (envelope, sessions, errors)'],
  [/calls\//, 'tool calls (ToolCall, legs, answer router, handler)'],
  [/./, 'broker: other modules'],
];

/** npm packages, by component. */
const PACKAGES = [
  [/^repo:packages\/backend-request-body$/, BODY_READING],
  [/^eventsource-parser$/, 'backend transport: SSE parsing (eventsource-parser)'],
  [/^jose$/, 'token verification (jose)'],
  [
    /^(winston|logform|triple-beam|winston-transport|@colors\/colors|safe-stable-stringify)$/,
    'logging (winston)',
  ],
  [
    /^(express|express-promise-router|router|path-to-regexp|finalhandler|send|serve-static)$/,
    'Express routing',
  ],
  [
    /^(body-parser|raw-body|iconv-lite|type-is|content-type|media-typer)$/,
    'body parsing (body-parser)',
  ],
  [
    /^(helmet|cors|compression|morgan|on-finished|on-headers|vary|accepts|negotiator|compressible|bytes|debug|depd)$/,
    'Backstage root middleware (helmet, CORS, compression, request log)',
  ],
  [/^(zod|zod-to-json-schema|ajv)$/, 'schema validation'],
  [/^(knex|better-sqlite3|pg)$/, 'database'],
];

/** Files of @backstage/backend-defaults, by component. */
const BACKEND_DEFAULTS_FILES = [
  [/auditor\//, 'audit trail: Backstage auditor (events, before winston)'],
  [
    /httpAuth|auth\/|Auth|[Tt]oken|[Cc]redentials/,
    'Backstage auth (httpAuth, credentials barrier)',
  ],
  [/[Ll]og/, 'logging (winston)'],
  [/./, 'Backstage root middleware (helmet, CORS, compression, request log)'],
];

function matchRule(rules, text) {
  return rules.find(([pattern]) => pattern.test(text))?.[1];
}

/** The component a call frame belongs to, or undefined for Node internals and native code. */
export function componentOf(callFrame) {
  const pkg = packageOf(callFrame);
  if (pkg === BROKER) {
    const file = callFrame.url.slice(callFrame.url.indexOf('/src/') + 5);
    return matchRule(BROKER_FILES, file);
  }
  if (pkg.startsWith('@backstage/')) {
    if (pkg === '@backstage/backend-defaults')
      return matchRule(BACKEND_DEFAULTS_FILES, callFrame.url);
    return `Backstage: ${pkg}`;
  }
  // undici (the broker's HTTP client since #27) and its llhttp parser (WebAssembly) are Node's
  // HTTP client's counterpart: counted for the code that called them, or as the client's own.
  if (isUndici(callFrame)) return undefined;
  return matchRule(PACKAGES, pkg) ?? (pkg.startsWith('repo:') ? pkg.slice(5) : undefined);
}

function isUndici({ url }) {
  return url.includes('/node_modules/undici/') || url.startsWith('wasm:');
}

/** Methods that middleware wraps around res.write/end/writeHead and that only pass through. */
function isPassThrough({ url, functionName }) {
  return (
    (url.endsWith('/compression/index.js') && ['write', 'end', 'on'].includes(functionName)) ||
    (url.endsWith('/on-headers/index.js') && functionName === 'writeHead')
  );
}

/** Native functions that write to a socket (on loopback they also run the receiver's TCP). */
function isSocketWrite({ url, functionName }) {
  return url === '' && /^(writev|writeBuffer|write\w*String)$/.test(functionName);
}

/** What a sample with no component frame on its stack is (see the file comment). */
function uncomponented(stack) {
  const pkg = packageOf(stack[0]);
  if (pkg === '(garbage collector)') return 'garbage collection (main thread)';
  if (pkg === '(program)') return '(program): V8/Node native code outside any JS frame';
  for (const { url } of stack) {
    if (url === 'node:_http_server')
      return 'Node HTTP server on its own (client requests: parsing, response end, sockets)';
    if (url === 'node:_http_client' || url === 'node:_http_agent')
      return 'Node HTTP client on its own (requests to the backend: flush, parse, agent)';
    if (isUndici({ url }))
      return 'undici on its own (requests to the backend: pools, llhttp parser in wasm)';
  }
  if (pkg.startsWith('node:') || pkg === '(native)')
    return 'Node streams/events/timers, side not on the stack (microtasks, nextTick)';
  return `other: ${pkg}`;
}

/** The component a sample's stack (innermost frame first) counts for (see the file comment). */
export function componentOfStack(stack) {
  for (const frame of stack) {
    if (frame !== stack[0] && isPassThrough(frame)) continue;
    const name = componentOf(frame);
    if (name !== undefined) return name;
  }
  return uncomponented(stack);
}

/** `{ busyMs, components, byPackage }`: CPU per component (see the file comment). */
export function summarizeProfile(profile) {
  const components = new Map();
  const byPackage = cpuByPackage(profile, (stack, ms) => {
    const name = componentOfStack(stack);
    const entry = components.get(name) ?? { name, ms: 0, socketWriteMs: 0 };
    entry.ms += ms;
    if (isSocketWrite(stack[0])) entry.socketWriteMs += ms;
    components.set(name, entry);
  });
  return {
    busyMs: byPackage.busyMs,
    components: [...components.values()].sort((a, b) => b.ms - a.ms),
    byPackage,
  };
}

/** Markdown tables of a profile; `calls` adds per-call columns, `top` bounds the long lists. */
export function profileSummaryLines(profile, { calls, top = 25 } = {}) {
  const { busyMs, components, byPackage } = summarizeProfile(profile);
  const percent = ms => `${((ms / busyMs) * 100).toFixed(1)} %`;
  const perCall = ms => (calls ? (ms / calls).toFixed(3) : '');
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  // The top functions by `key` (selfMs or inclusiveMs): that measure's columns first.
  const functionTable = (heading, functions, key) => {
    const other = key === 'selfMs' ? 'inclusiveMs' : 'selfMs';
    const label = measure => (measure === 'selfMs' ? 'self' : 'inclusive');
    return [
      heading,
      '',
      markdownTable(
        ['function', `${label(key)} %`, `${label(key)} ms/call`, `${label(other)} %`],
        functions
          .slice(0, top)
          .map(f => [f.name, percent(f[key]), perCall(f[key]), percent(f[other])]),
      ),
      '',
    ];
  };
  return [
    `Main thread busy ${(busyMs / 1000).toFixed(2)} s of ${seconds.toFixed(2)} s profiled${calls ? `: ${(busyMs / calls).toFixed(3)} ms per call over ${calls} calls` : ''}.`,
    '',
    '#### By component (innermost component frame on the stack)',
    '',
    markdownTable(
      ['component', '% of busy', 'ms per call', 'of which socket writes (writev), %'],
      components.map(({ name, ms, socketWriteMs }) => [
        name,
        percent(ms),
        perCall(ms),
        socketWriteMs > 0 ? percent(socketWriteMs) : '',
      ]),
    ),
    '',
    '#### By package',
    '',
    markdownTable(
      ['package', 'self %', 'self ms/call', 'inclusive %', 'inclusive ms/call'],
      byPackage.packages
        .slice(0, top)
        .map(p => [
          p.name,
          percent(p.selfMs),
          perCall(p.selfMs),
          percent(p.inclusiveMs),
          perCall(p.inclusiveMs),
        ]),
    ),
    '',
    ...functionTable('#### Functions by self time', byPackage.functions, 'selfMs'),
    ...functionTable(
      '#### Functions by inclusive time (synchronous stacks only)',
      byPackage.functionsByInclusive,
      'inclusiveMs',
    ),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const value = name => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const file = args[0];
  if (!file || file.startsWith('--')) {
    process.stderr.write(
      'usage: node bench/profileSummary.mjs <file.cpuprofile> [--calls N] [--top N]\n',
    );
    process.exit(2);
  }
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const calls = value('--calls') === undefined ? undefined : Number(value('--calls'));
  const top = Number(value('--top') ?? 25);
  process.stdout.write(`## CPU profile ${path.basename(file)}\n\n`);
  process.stdout.write(`${profileSummaryLines(profile, { calls, top }).join('\n')}\n`);
}
