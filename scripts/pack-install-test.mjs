#!/usr/bin/env node
/*
 * Proves the "installed into an existing Backstage backend" promise end to end:
 * 1. builds and packs the published plugin packages (`yarn pack`, as npm would publish them);
 * 2. creates a minimal Backstage backend in a temporary folder from public packages only, with
 *    the tarballs as its only link to this repository, and `backend.add(import(...))` for each;
 * 3. starts it on a fresh PostgreSQL database (so migrations run from scratch) and calls one
 *    portal route and the broker's `initialize`.
 *
 * Needs: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING (as .ci/run sets), network access
 * to the npm registry (or a warm Yarn cache). Usage: node scripts/pack-install-test.mjs [--keep]
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const published = [
  { workspace: '@devportal/plugin-portal-common', dir: 'plugins/portal-common' },
  { workspace: '@devportal/plugin-portal-backend', dir: 'plugins/portal-backend' },
  { workspace: '@devportal/plugin-mcp-broker-backend', dir: 'plugins/mcp-broker-backend' },
];
const keep = process.argv.includes('--keep');
const pgUrl = process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING;
if (!pgUrl) {
  console.log('pack-install: skipped, BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set');
  process.exit(0);
}

function sh(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`);
  return execFileSync(command, args, { stdio: 'inherit', ...options });
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pack-install-'));
const tarballs = path.join(work, 'tarballs');
const app = path.join(work, 'backend');
fs.mkdirSync(tarballs);
fs.mkdirSync(app);

// 1. Build and pack. `yarn pack` runs each package's prepack (publishConfig applied) and turns
// workspace: ranges into real versions, exactly as a publish would.
const rootPkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
const tarballOf = {};
for (const { workspace, dir } of published) {
  sh('yarn', ['backstage-cli', 'package', 'build'], { cwd: path.join(repoRoot, dir) });
  const out = path.join(tarballs, `${workspace.replace('@', '').replace('/', '-')}.tgz`);
  sh('yarn', ['pack', '--out', out], { cwd: path.join(repoRoot, dir) });
  tarballOf[workspace] = out;
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', out, 'package/package.json'], { encoding: 'utf8' }),
  );
  const deps = { ...manifest.dependencies, ...manifest.peerDependencies };
  for (const [name, range] of Object.entries(deps)) {
    if (String(range).startsWith('workspace:') || name.startsWith('@internal/')) {
      throw new Error(`${workspace} depends on ${name}@${range}: not installable outside the monorepo`);
    }
  }
  for (const required of ['backstage', 'files']) {
    if (!manifest[required]) throw new Error(`${workspace}: package.json lacks "${required}"`);
  }
}

// 2. A minimal backend from public packages and the tarballs only.
const backendDefaults = JSON.parse(
  fs.readFileSync(path.join(repoRoot, 'node_modules/@backstage/backend-defaults/package.json'), 'utf8'),
).version;
fs.writeFileSync(
  path.join(app, 'package.json'),
  JSON.stringify(
    {
      name: 'pack-install-backend',
      private: true,
      packageManager: rootPkg.packageManager,
      dependencies: {
        '@backstage/backend-defaults': backendDefaults,
        '@devportal/plugin-portal-backend': `file:${tarballOf['@devportal/plugin-portal-backend']}`,
        '@devportal/plugin-mcp-broker-backend': `file:${tarballOf['@devportal/plugin-mcp-broker-backend']}`,
        pg: '^8.11.0',
      },
      // The portal backend depends on portal-common by version; point that version at its tarball.
      resolutions: {
        ...rootPkg.resolutions,
        '@devportal/plugin-portal-common': `file:${tarballOf['@devportal/plugin-portal-common']}`,
      },
      dependenciesMeta: rootPkg.dependenciesMeta,
    },
    null,
    2,
  ),
);
fs.writeFileSync(path.join(app, '.yarnrc.yml'), 'nodeLinker: node-modules\nenableTelemetry: false\nenableScripts: false\n');
fs.writeFileSync(path.join(app, 'yarn.lock'), '');
fs.writeFileSync(
  path.join(app, 'index.js'),
  `const { createBackend } = require('@backstage/backend-defaults');
const backend = createBackend();
backend.add(import('@devportal/plugin-portal-backend'));
backend.add(import('@devportal/plugin-mcp-broker-backend'));
backend.start();
`,
);
const port = await freePort();
const token = crypto.randomBytes(24).toString('base64url');
const prefix = `packtest_${crypto.randomBytes(4).toString('hex')}_`;
fs.writeFileSync(
  path.join(app, 'app-config.yaml'),
  JSON.stringify({
    backend: {
      baseUrl: `http://127.0.0.1:${port}`,
      listen: { port, host: '127.0.0.1' },
      database: { client: 'pg', connection: pgUrl, prefix, pluginDivisionMode: 'database' },
      auth: { externalAccess: [{ type: 'static', options: { token, subject: 'pack-install-test' } }] },
    },
    mcpBroker: { servers: [] },
  }),
);
sh('yarn', ['install'], { cwd: app, env: { ...process.env, YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' } });

// 3. Start it and call the plugins.
let output = '';
const child = spawn(process.execPath, ['index.js', '--config', 'app-config.yaml'], {
  cwd: app,
  env: { ...process.env, NODE_ENV: 'production' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
child.stdout.on('data', c => (output += c));
child.stderr.on('data', c => (output += c));
const base = `http://127.0.0.1:${port}/api`;
const auth = { Authorization: `Bearer ${token}` };
let failure;
try {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`backend exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/.backstage/health/v1/readiness`).then(r => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error('backend did not start in 60 s');
    await new Promise(r => setTimeout(r, 500));
  }
  const products = await fetch(`${base}/portal/apiproducts`, { headers: auth });
  const productsBody = await products.text();
  if (products.status !== 200 || !Array.isArray(JSON.parse(productsBody).items)) {
    throw new Error(`GET /api/portal/apiproducts answered ${products.status}: ${productsBody}`);
  }
  console.log(`GET /api/portal/apiproducts → ${products.status} ${productsBody}`);
  const init = await fetch(`${base}/mcp-broker/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pack-install', version: '1' } },
    }),
  });
  const initBody = await init.text();
  if (init.status !== 200 || !init.headers.get('mcp-session-id') || !initBody.includes('"protocolVersion"')) {
    throw new Error(`initialize answered ${init.status}: ${initBody}`);
  }
  console.log(`POST /api/mcp-broker/mcp initialize → ${init.status}, session ${init.headers.get('mcp-session-id') ? 'issued' : 'missing'}`);
} catch (error) {
  failure = error;
} finally {
  child.kill('SIGTERM');
  await new Promise(r => child.once('exit', r));
  // Drop the databases this run created (one per plugin, named with the random prefix).
  const { default: pg } = await import(path.join(repoRoot, 'node_modules/pg/lib/index.js'));
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${prefix}%`]);
  for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  await client.end();
  if (!keep) fs.rmSync(work, { recursive: true, force: true });
}
if (failure) {
  console.error(`pack-install: FAILED: ${failure.message}\n--- backend output ---\n${output}`);
  console.log('pack-install: 0 passed, 1 failed');
  process.exit(1);
}
console.log('pack-install: 1 passed, 0 failed');
