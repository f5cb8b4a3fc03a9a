#!/usr/bin/env node
/*
 * Existence by timing (issue #20 item 7): how long a 404 takes for an API key that does not
 * exist and for one that exists but that the caller may not see, side by side, on the real
 * development backend (RBAC plugin with the example policies, SQLite in memory).
 *
 * bob (api-owner: approve on the condition IS_PRODUCT_OWNER, read.own) approves a key alice
 * requested for carol's product (hidden from bob) and a key name that does not exist; both
 * answer 404. The two kinds of call interleave, after a warm-up. A benchmark, not a test:
 * nothing fails because of a number.
 *
 *   node bench/portal-existence.mjs [--iterations 200]
 */
import { parseArgs } from 'node:util';
import { startPortalBackend } from './lib/backend.mjs';
import { ms, summarize } from './lib/stats.mjs';

const { values: options } = parseArgs({
  options: { iterations: { type: 'string', default: '200' } },
});
const iterations = Number(options.iterations);
const WARMUP = 20;

const { backend, tokens } = await startPortalBackend({
  database: { client: 'better-sqlite3', connection: ':memory:' },
  logLevel: 'warn',
  users: ['alice', 'bob', 'carol'],
});

async function call(user, method, path, body) {
  const started = performance.now();
  const response = await fetch(`${backend.baseUrl}/api/portal${path}`, {
    method,
    headers: { authorization: `Bearer ${tokens[user]}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  return { status: response.status, json, ms: performance.now() - started };
}

try {
  const product = await call('carol', 'POST', '/apiproducts', {
    metadata: { namespace: 'toystore', name: 'existence-bench' },
    spec: {
      displayName: 'Existence bench',
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
      publishStatus: 'Published',
    },
  });
  if (product.status !== 201)
    throw new Error(`creating the product: ${JSON.stringify(product.json)}`);
  const key = await call('alice', 'POST', '/requests', {
    apiProductRef: { namespace: 'toystore', name: 'existence-bench' },
    planTier: 'gold',
  });
  if (key.status !== 201) throw new Error(`requesting the key: ${JSON.stringify(key.json)}`);
  const paths = {
    missing: '/requests/toystore/no-such-key/approve',
    hidden: `/requests/toystore/${key.json.metadata.name}/approve`,
  };
  const samples = { missing: [], hidden: [] };
  for (let i = 0; i < WARMUP + iterations; i++) {
    for (const kind of i % 2 === 0 ? ['missing', 'hidden'] : ['hidden', 'missing']) {
      const answer = await call('bob', 'POST', paths[kind], {});
      if (answer.status !== 404) throw new Error(`${kind}: expected 404, got ${answer.status}`);
      if (i >= WARMUP) samples[kind].push(answer.ms);
    }
  }
  const missing = summarize(samples.missing);
  console.log('| approve as bob, 404 for | n | p50 ms | p99 ms | p50 ratio to missing |');
  console.log('|---|---|---|---|---|');
  for (const kind of ['missing', 'hidden']) {
    const s = summarize(samples[kind]);
    console.log(
      `| ${kind} key | ${s.n} | ${ms(s.p50)} | ${ms(s.p99)} | ${(s.p50 / missing.p50).toFixed(2)} |`,
    );
  }
} finally {
  await backend.stop();
}
