#!/usr/bin/env node
/*
 * Rolling restart under load (issue #41): two replicas of the development backend on a
 * PostgreSQL of the benchmark's own, behind a plain round-robin proxy (bench/lib/
 * roundRobinProxy.mjs), with steady portal and MCP traffic in both eras, open GET streams, and
 * each replica in turn taken out of rotation, stopped with SIGTERM (it drains) and started
 * again, as a Deployment's rolling update does.
 *
 *   node bench/rollingRestart.mjs                 # 2 rounds (each replica restarted twice)
 *   node bench/rollingRestart.mjs --rounds 1 --rate 20
 *   node bench/rollingRestart.mjs --kill          # SIGKILL instead (a replica lost: no drain)
 *   node bench/rollingRestart.mjs --postgres-outage 10   # no restart: PostgreSQL stopped 10 s
 * With --postgres-outage the replicas stay up and the database goes away for that long (an
 * operator's restart of it: open connections are terminated), then comes back; a request the
 * proxy saw closed without an answer is a dropped connection (the proxy answers it 503).
 *
 * The clients follow the spec and nothing more: a 503 with `Retry-After` is sent again after that
 * long (bench/lib/retryingFetch.mjs, counted), a JSON-RPC error marked `retryable` makes an MCP
 * call start again (counted), a GET stream that ends is opened again (through the proxy, so on
 * whichever replica it lands). Anything else is a failure. Traffic (open loop, an operation every
 * 1/rate s, at most --max-in-flight at once):
 *   30 % portal reads (products, my requests, all requests, plan policies)
 *   10 % portal key cycles: alice requests a key (automatic approval), reads its secret once,
 *        deletes it — a secret read answered anything but 200 is a lost secret
 *   25 % 2025-11-25 `tools/call echo` on one of the long-lived sessions (each with a GET stream)
 *   25 % 2026-07-28 `tools/call echo` (stateless)
 *   10 % 2025-11-25 session churn: initialize, tools/list, DELETE
 * A long-lived session's request answered 404 is a lost session.
 * Markdown tables go to stdout, progress to stderr. Exits 0 when the run completed (the verdicts
 * are in the tables), 1 when it could not run.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { loadAverage, machineFacts } from './lib/machine.mjs';
import { processStoppers } from './lib/processStoppers.mjs';
import { replicaConfig } from './lib/replicaConfig.mjs';
import { retryingFetch } from './lib/retryingFetch.mjs';
import { startRoundRobinProxy } from './lib/roundRobinProxy.mjs';
import { scheduleOf, soakOperations } from './lib/soakTraffic.mjs';
import { markdownTable, ms, summarize } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { startBackendProcess } = require('../packages/backend/src/testing/startBackendProcess.ts');
const { startPostgresServer } = require('../packages/backend/src/testing/postgresServer.ts');
const {
  createPublishedProduct,
  portalCall,
} = require('../packages/backend/src/testing/portalHttp.ts');
const { startRawMcpSession } = require('../packages/backend/src/testing/rawMcpSession.ts');
const {
  modernRequest,
} = require('../packages/backend/src/e2e/__testUtils__/modernBrokerClient.ts');
const { startExampleMcpServer } = require('../packages/example-mcp-server/src/index.ts');

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    rate: { type: 'string', default: '15' },
    'max-in-flight': { type: 'string', default: '50' },
    sessions: { type: 'string', default: '10' },
    'settle-seconds': { type: 'string', default: '20' },
    kill: { type: 'boolean', default: false },
    'postgres-outage': { type: 'string' },
  },
});
const rounds = Number(options.rounds);
const rate = Number(options.rate);
const maxInFlight = Number(options['max-in-flight']);
const sessionCount = Number(options.sessions);
const settleMs = Number(options['settle-seconds']) * 1000;
const kill = options.kill;
const outageMs =
  options['postgres-outage'] === undefined ? undefined : Number(options['postgres-outage']) * 1000;
const NS = 'toystore';
const PROTOCOL_VERSION = '2025-11-25';

function log(message) {
  process.stderr.write(`[rolling ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Labels requests for the retry counts: the portal route's first segment, or the MCP method. */
function labelOf(url, method) {
  const { pathname } = new URL(url);
  if (pathname.startsWith('/api/portal/')) {
    return `portal ${method} /${pathname.split('/')[3]}`;
  }
  if (pathname.startsWith('/api/mcp-broker/mcp')) return `mcp ${method}`;
  return `${method} ${pathname}`;
}

const expect = (condition, what) => {
  if (!condition) throw new Error(what);
};
const isRetryable = answer => answer?.error?.data?.retryable === true;

/** 'retry' for an error marked retryable; else throws unless `answer` echoed `message`. */
function echoed(answer, message) {
  if (isRetryable(answer.response)) return 'retry';
  const text = answer.response?.result?.content?.[0]?.text;
  expect(
    answer.status === 200 && text === message,
    `echo answered ${answer.status} ${JSON.stringify(answer.response?.error ?? '')}`,
  );
  return undefined;
}

/**
 * A GET stream kept open on a session, as a 2025-11-25 client keeps it: opened again whenever it
 * ends. Records each gap between an end and the next open stream, and what refused it.
 */
function keepStreamOpen(mcpUrl, token, sessionId, stopped) {
  const record = { opened: 0, gapsMs: [], refusals: new Map(), lost: false };
  const done = (async () => {
    let endedAt;
    while (!stopped.aborted) {
      let response;
      try {
        response = await fetch(mcpUrl, {
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'text/event-stream',
            'mcp-session-id': sessionId,
            'mcp-protocol-version': PROTOCOL_VERSION,
          },
          signal: stopped,
        });
      } catch {
        if (stopped.aborted) break;
        record.refusals.set('network', (record.refusals.get('network') ?? 0) + 1);
        await new Promise(resolve => setTimeout(resolve, 100));
        continue;
      }
      if (response.status !== 200) {
        await response.arrayBuffer().catch(() => undefined);
        record.refusals.set(response.status, (record.refusals.get(response.status) ?? 0) + 1);
        if (response.status === 404) {
          record.lost = true;
          break;
        }
        // 409: the session's stream is still held elsewhere (its lease); try again shortly.
        await new Promise(resolve => setTimeout(resolve, 100));
        continue;
      }
      record.opened += 1;
      if (endedAt !== undefined) record.gapsMs.push(Date.now() - endedAt);
      try {
        for await (const _chunk of response.body) {
          // keep-alives and list_changed notifications; nothing to answer
        }
      } catch {
        // cut off: as ended
      }
      endedAt = Date.now();
    }
  })();
  return { record, done };
}

async function main() {
  const { stoppers, stopAll } = processStoppers(log);
  try {
    const retries = retryingFetch(globalThis.fetch, labelOf);
    globalThis.fetch = retries.fetch;
    const postgres = await startPostgresServer({ maxConnections: 100 });
    stoppers.push(() => postgres.destroy());
    const example = await startExampleMcpServer({ port: 0 });
    stoppers.push(() => example.close());
    const config = replicaConfig(postgres, example.url);
    const proxy = await startRoundRobinProxy();
    stoppers.push(() => proxy.close());
    const replicas = new Map();
    let started = 0;
    const startReplica = async () => {
      const id = `replica-${started++}`;
      const t0 = performance.now();
      const replica = await startBackendProcess({ config, startTimeoutMs: 180_000 });
      stoppers.push(() => replica.stop());
      replicas.set(id, replica);
      proxy.add(id, replica.port);
      log(`${id} up on port ${replica.port} (${Math.round(performance.now() - t0)} ms)`);
      return { id, startMs: performance.now() - t0 };
    };
    await startReplica();
    await startReplica();
    const first = replicas.values().next().value;
    const tokens = {};
    for (const user of ['alice', 'bob', 'carol']) tokens[user] = await first.signIn(user);
    const product = `rolling-${Date.now().toString(36)}`;
    await createPublishedProduct(first, tokens.carol, product, { approvalMode: 'automatic' });

    const front = { baseUrl: proxy.baseUrl };
    const mcpUrl = `${proxy.baseUrl}/api/mcp-broker/mcp`;
    // Every replica lists the example server before the clock starts.
    for (let attempt = 0; ; attempt++) {
      const session = await startRawMcpSession(mcpUrl, tokens.carol);
      const answers = await Promise.all([0, 1].map(() => session.request('tools/list', {})));
      await session.end();
      if (answers.every(a => a.response?.result?.tools?.some(t => t.name === 'example_echo')))
        break;
      if (attempt > 200) throw new Error('the broker did not list the example server');
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    const stopped = new AbortController();
    const sessions = [];
    const streams = [];
    for (let i = 0; i < sessionCount; i++) {
      const session = await startRawMcpSession(mcpUrl, tokens.carol);
      sessions.push(session);
      streams.push(keepStreamOpen(mcpUrl, tokens.carol, session.sessionId, stopped.signal));
    }

    // Reads and session churn as the soak runs them, here all through the proxy.
    const soak = soakOperations({ replicas: [front, front], tokens, product, sessions });
    const soakOp = (kind, weight) => ({ ...soak.find(op => op.kind === kind), weight });
    let modernId = 0;
    const lost = { sessions: 0, secrets: 0 };
    const ops = [
      soakOp('portal read', 30),
      {
        kind: 'portal key cycle',
        weight: 10,
        async run() {
          const created = await portalCall(front, 'POST', '/requests', {
            token: tokens.alice,
            body: { apiProductRef: { namespace: NS, name: product }, planTier: 'gold' },
          });
          expect(created.status === 201, `POST /requests answered ${created.status}`);
          const name = created.body.metadata.name;
          const secret = await portalCall(front, 'GET', `/apikeys/${NS}/${name}/secret`, {
            token: tokens.alice,
          });
          if (secret.status !== 200) lost.secrets += 1;
          expect(secret.status === 200, `the one secret read answered ${secret.status}`);
          const deleted = await portalCall(front, 'DELETE', `/requests/${NS}/${name}`, {
            token: tokens.alice,
          });
          expect(deleted.status === 204, `DELETE answered ${deleted.status}`);
        },
      },
      {
        kind: 'mcp echo (2025-11-25 session)',
        weight: 25,
        async run(n) {
          const message = `rolling ${n}`;
          const answer = await sessions[n % sessions.length].request('tools/call', {
            name: 'example_echo',
            arguments: { message },
          });
          if (answer.status === 404) lost.sessions += 1;
          return echoed(answer, message);
        },
      },
      {
        kind: 'mcp echo (2026-07-28)',
        weight: 25,
        async run(n) {
          const message = `rolling ${n}`;
          const answer = await modernRequest(
            proxy.baseUrl,
            tokens.carol,
            (modernId += 1),
            'tools/call',
            {
              name: 'example_echo',
              arguments: { message },
            },
          );
          return echoed(answer, message);
        },
      },
      soakOp('mcp session churn', 10),
    ];
    const schedule = scheduleOf(ops);
    const results = new Map(
      ops.map(op => [op.kind, { ok: 0, latencies: [], retriedCalls: 0, errors: [] }]),
    );

    let inFlight = 0;
    let skipped = 0;
    const running = new Set();
    const t0 = Date.now();
    const traffic = (async () => {
      for (let n = 0; !stopped.signal.aborted; n++) {
        const wait = t0 + (n * 1000) / rate - Date.now();
        if (wait > 0) await new Promise(resolve => setTimeout(resolve, wait));
        if (inFlight >= maxInFlight) {
          skipped += 1;
          continue;
        }
        const op = schedule[n % schedule.length];
        const result = results.get(op.kind);
        inFlight += 1;
        const begun = performance.now();
        const run = (async () => {
          for (let attempt = 0; ; attempt++) {
            const outcome = await op.run(n);
            if (outcome !== 'retry' || attempt >= 5) return;
            result.retriedCalls += 1;
            await new Promise(resolve => setTimeout(resolve, 200));
          }
        })()
          .then(
            () => {
              result.ok += 1;
              result.latencies.push(performance.now() - begun);
            },
            error =>
              result.errors.push(`${Math.round((Date.now() - t0) / 1000)} s: ${error.message}`),
          )
          .finally(() => {
            inFlight -= 1;
            running.delete(run);
          });
        running.add(run);
      }
    })();

    const restarts = [];
    await new Promise(resolve => setTimeout(resolve, settleMs));
    const outages = [];
    if (outageMs !== undefined) {
      log(`stopping PostgreSQL for ${outageMs / 1000} s (load ${loadAverage()})`);
      const before = proxy.counts.upstreamFailures;
      const begun = performance.now();
      await postgres.stop();
      await new Promise(resolve => setTimeout(resolve, outageMs));
      await postgres.start();
      const downMs = performance.now() - begun;
      log('PostgreSQL is back');
      await new Promise(resolve => setTimeout(resolve, settleMs));
      outages.push({ downMs, dropped: proxy.counts.upstreamFailures - before });
    }
    for (let round = 0; outageMs === undefined && round < rounds; round++) {
      for (const id of [...replicas.keys()]) {
        const replica = replicas.get(id);
        log(`restarting ${id} (load ${loadAverage()})`);
        const begun = performance.now();
        // As a rolling update: the endpoint leaves the rotation as the pod gets SIGTERM. A lost
        // replica (--kill) gets SIGKILL and leaves the rotation only once it is gone, as a
        // load balancer notices a dead endpoint.
        if (kill) {
          await replica.kill();
          proxy.remove(id);
        } else {
          proxy.remove(id);
          await replica.stop();
        }
        replicas.delete(id);
        const stopMs = performance.now() - begun;
        const next = await startReplica();
        restarts.push({ id, next: next.id, stopMs, startMs: next.startMs });
        await new Promise(resolve => setTimeout(resolve, settleMs));
      }
    }
    stopped.abort();
    await traffic;
    await Promise.all([...running]);
    await Promise.all(streams.map(s => s.done));
    const durationS = Math.round((Date.now() - t0) / 1000);

    const facts = machineFacts();
    const lines = [
      outageMs === undefined
        ? `# Rolling restart${kill ? ' with SIGKILL' : ''}: ${rounds} round(s) of 2 replicas, ${durationS} s at ${rate} operations/s`
        : `# PostgreSQL stopped for ${outageMs / 1000} s under load: 2 replicas, ${durationS} s at ${rate} operations/s`,
      '',
      `${facts.nproc} cores, ${facts.memoryGiB} GiB, Node ${facts.node}; load ${loadAverage()}`,
      '',
      '### Operations',
      '',
      markdownTable(
        ['operation', 'succeeded', 'failed', 'calls retried (retryable)', 'p50 ms', 'p99 ms'],
        ops.map(op => {
          const r = results.get(op.kind);
          const s = summarize(r.latencies);
          return [op.kind, r.ok, r.errors.length, r.retriedCalls, ms(s.p50), ms(s.p99)];
        }),
      ),
      '',
      `Skipped (${maxInFlight} in flight): ${skipped}. Lost sessions (404): ${lost.sessions}. ` +
        `Lost one-time secrets: ${lost.secrets}.`,
      '',
      '### Requests retried after a 503 with Retry-After',
      '',
      markdownTable(
        ['request', 'retried', 'gave up after 10'],
        [...new Set([...retries.counts.retried.keys(), ...retries.counts.gaveUp.keys()])].map(
          label => [
            label,
            retries.counts.retried.get(label) ?? 0,
            retries.counts.gaveUp.get(label) ?? 0,
          ],
        ),
      ),
      '',
      `The proxy answered ${proxy.counts.upstreamFailures} request(s) 503 itself (a replica ` +
        `unreachable or closing the connection) of ${proxy.counts.forwarded} forwarded.`,
      '',
      '### GET streams (one per long-lived session)',
      '',
      markdownTable(
        [
          'streams',
          'opened in all',
          'lost (404)',
          'refusals before reopening',
          'gap p50 ms',
          'gap max ms',
        ],
        [
          (() => {
            const gaps = streams.flatMap(s => s.record.gapsMs);
            const refusals = new Map();
            for (const s of streams)
              for (const [status, n] of s.record.refusals)
                refusals.set(status, (refusals.get(status) ?? 0) + n);
            const s = summarize(gaps);
            return [
              streams.length,
              streams.reduce((sum, st) => sum + st.record.opened, 0),
              streams.filter(st => st.record.lost).length,
              [...refusals].map(([status, n]) => `${n}× ${status}`).join(', ') || 'none',
              ms(s.p50),
              ms(s.max),
            ];
          })(),
        ],
      ),
      '',
      ...outages.map(
        o =>
          `PostgreSQL was down for ${ms(o.downMs)} ms in all; meanwhile the replicas closed ` +
          `${o.dropped} connection(s) without an answer.\n`,
      ),
      ...(restarts.length === 0
        ? []
        : [
            '### Restarts',
            '',
            markdownTable(
              [
                'replica',
                'replaced by',
                `${kill ? 'SIGKILL' : 'SIGTERM'} to exit ms`,
                'start to ready ms',
              ],
              restarts.map(r => [r.id, r.next, ms(r.stopMs), ms(r.startMs)]),
            ),
          ]),
    ];
    const failures = [...results].flatMap(([kind, r]) => r.errors.map(e => `${kind}: ${e}`));
    if (failures.length > 0) {
      lines.push('', '### Failures', '', ...failures.slice(0, 30).map(f => `- ${f}`));
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await stopAll();
  }
}

main().catch(error => {
  process.stderr.write(`rolling restart failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
