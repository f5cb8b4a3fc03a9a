/*
 * The soak benchmark's traffic (bench/soak.mjs): the kinds of operation with their weights, each
 * an async function of its sequence number that throws unless the expected answer came, and the
 * order in which the kinds follow each other.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('@backstage/cli/config/nodeTransform.cjs');
const { portalCall } = require('../../packages/backend/src/testing/portalHttp.ts');
const { startRawMcpSession } = require('../../packages/backend/src/testing/rawMcpSession.ts');

const NS = 'toystore';

/** The operations, with their weights (out of 100). */
export function soakOperations(env) {
  const { replicas, tokens, product, sessions } = env;
  const mcpUrl = replica => `${replica.baseUrl}/api/mcp-broker/mcp`;
  const reads = [
    ['alice', '/apiproducts'],
    ['alice', '/requests/my'],
    ['bob', '/requests'],
    ['carol', '/planpolicies'],
  ];
  const expect = (condition, what) => {
    if (!condition) throw new Error(what);
  };
  return [
    {
      kind: 'portal read',
      weight: 40,
      async run(n) {
        const [user, route] = reads[n % reads.length];
        const answer = await portalCall(replicas[n % 2], 'GET', route, { token: tokens[user] });
        expect(answer.status === 200, `GET ${route} answered ${answer.status}`);
      },
    },
    {
      kind: 'portal key cycle',
      weight: 10,
      async run(n) {
        const [a, b] = n % 2 === 0 ? replicas : [...replicas].reverse();
        const created = await portalCall(a, 'POST', '/requests', {
          token: tokens.alice,
          body: { apiProductRef: { namespace: NS, name: product }, planTier: 'gold' },
        });
        expect(created.status === 201, `POST /requests answered ${created.status}`);
        const name = created.body.metadata.name;
        const secret = await portalCall(b, 'GET', `/apikeys/${NS}/${name}/secret`, {
          token: tokens.alice,
        });
        expect(secret.status === 200, `the secret read answered ${secret.status}`);
        const deleted = await portalCall(a, 'DELETE', `/requests/${NS}/${name}`, {
          token: tokens.alice,
        });
        expect(deleted.status === 204, `DELETE answered ${deleted.status}`);
      },
    },
    {
      kind: 'mcp echo',
      weight: 35,
      async run(n) {
        const session = sessions[n % sessions.length].at(mcpUrl(replicas[n % 2]));
        const message = `soak ${n}`;
        const answer = await session.request('tools/call', {
          name: 'example_echo',
          arguments: { message },
        });
        const text = answer.response?.result?.content?.[0]?.text;
        expect(answer.status === 200 && text === message, `echo answered ${answer.status}`);
      },
    },
    {
      kind: 'mcp progress',
      weight: 5,
      async run(n) {
        const session = sessions[n % sessions.length].at(mcpUrl(replicas[(n + 1) % 2]));
        const answer = await session.request('tools/call', {
          name: 'example_count',
          arguments: { steps: 3, delayMs: 20 },
          _meta: { progressToken: `soak-${n}` },
        });
        const text = answer.response?.result?.content?.[0]?.text;
        expect(answer.status === 200 && text === 'counted to 3', `count answered ${answer.status}`);
      },
    },
    {
      kind: 'mcp session churn',
      weight: 10,
      async run(n) {
        const session = await startRawMcpSession(mcpUrl(replicas[n % 2]), tokens.carol);
        const other = session.at(mcpUrl(replicas[(n + 1) % 2]));
        const listed = await other.request('tools/list', {});
        expect(listed.status === 200, `tools/list answered ${listed.status}`);
        const ended = await session.end();
        expect(ended.status === 204, `DELETE answered ${ended.status}`);
      },
    },
  ];
}

/** Picks operation kinds by weight, deterministically (the n-th operation's kind). */
export function scheduleOf(ops) {
  const slots = ops.flatMap(op => Array(op.weight).fill(op));
  // Spread the kinds over the cycle instead of running them in blocks.
  const spread = slots.map((op, i) => ({ op, key: (i * 37) % slots.length }));
  spread.sort((x, y) => x.key - y.key);
  return spread.map(s => s.op);
}
