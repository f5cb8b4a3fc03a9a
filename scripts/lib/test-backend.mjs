/*
 * Shared by the out-of-repo install tests (pack-install-test.mjs, dynamic-plugin-test.mjs): a
 * minimal Backstage backend in a temporary folder, built from public packages only, started on
 * fresh PostgreSQL databases and probed the way a user would (one portal route and the broker's
 * `initialize`), plus the checks that both plugins' migrations ran there.
 */
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './freePort.mjs';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The root package.json (packageManager, resolutions, dependenciesMeta are reused). */
export const rootPkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));

/** The version of an installed package in the monorepo (to pin the test backend to the same). */
export function installedVersion(name) {
  return JSON.parse(
    fs.readFileSync(path.join(repoRoot, 'node_modules', name, 'package.json'), 'utf8'),
  ).version;
}

/** Runs a command, echoing it, with its output on ours. */
export function sh(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(' ')}`);
  return execFileSync(command, args, { stdio: 'inherit', ...options });
}

/**
 * Runs a command under an exclusive lock shared by every install test on this machine.
 * `yarn pack` (backstage-cli prepack/postpack) and `rhdh-cli plugin export` rewrite the plugin's
 * package.json in place for a moment and rebuild dist/; two runs at once in one working tree
 * (developers running `yarn test` side by side) would otherwise pack each other's halfway state
 * or leave a rewritten package.json behind.
 */
export function shLocked(command, args, options = {}) {
  return sh('flock', [path.join(os.tmpdir(), 'devportal-pack.lock'), command, ...args], options);
}

/** The monorepo's resolutions, with paths into it (`portal:./tools/node-gyp`) made absolute. */
function rootResolutions() {
  return Object.fromEntries(
    Object.entries(rootPkg.resolutions).map(([name, range]) => {
      const local = /^(portal|link|file):(\.\.?\/.*)$/.exec(range);
      return [name, local ? `${local[1]}:${path.resolve(repoRoot, local[2])}` : range];
    }),
  );
}

/** Whether `dir` is on the file system of Yarn's global folder (where its store lives). */
function onYarnGlobalFileSystem(dir) {
  try {
    const globalFolder = execFileSync('yarn', ['config', 'get', 'globalFolder'], {
      cwd: repoRoot,
      encoding: 'utf8',
    }).trim();
    return fs.statSync(globalFolder).dev === fs.statSync(dir).dev;
  } catch {
    return false;
  }
}

/**
 * Writes a Yarn project outside this repository into `dir`: package.json (the given dependencies
 * and resolutions plus the monorepo's resolutions and dependenciesMeta, which work around registry
 * gaps; no lockfile, public packages only) and a .yarnrc.yml: node_modules, no install scripts.
 * `hardLinks`: files hard-linked from Yarn's global store instead of copied
 * (`nmMode: hardlinks-global`; the link step of a few hundred packages otherwise costs a minute
 * of disk writes on two cores) — only for a project that never writes into its node_modules,
 * since a write there would change the global store's copy. Yarn cannot hard-link across file
 * systems (and does not fall back to copying), so a `dir` on another one than Yarn's global
 * folder copies as usual.
 */
export function writeYarnProject({ dir, name, dependencies, resolutions = {}, hardLinks = false }) {
  fs.mkdirSync(dir, { recursive: true });
  const linkFromStore = hardLinks && onYarnGlobalFileSystem(dir);
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify(
      {
        name,
        version: '0.0.0',
        private: true,
        packageManager: rootPkg.packageManager,
        dependencies,
        resolutions: { ...rootResolutions(), ...resolutions },
        dependenciesMeta: rootPkg.dependenciesMeta,
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(dir, '.yarnrc.yml'),
    `nodeLinker: node-modules\n${
      linkFromStore ? 'nmMode: hardlinks-global\n' : ''
    }enableTelemetry: false\nenableScripts: false\n`,
  );
  fs.writeFileSync(path.join(dir, 'yarn.lock'), '');
}

/** `yarn install` in a project {@link writeYarnProject} wrote (it has no lockfile yet). */
export function yarnInstall(dir) {
  sh('yarn', ['install'], {
    cwd: dir,
    env: { ...process.env, YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' },
  });
}

/**
 * Writes a backend app into `app`: package.json (the given dependencies and resolutions plus the
 * monorepo's resolutions and dependenciesMeta, which work around registry gaps), an index.js with
 * the given body, and an app-config.yaml on fresh PostgreSQL databases (random prefix, one per
 * plugin) with a static token for the probes. Both plugins use their database stores so that
 * their migrations run from scratch. `config` is merged over that (top-level keys replace, except
 * `backend`, whose keys are merged in). Then `yarn install` (no lockfile: public packages only).
 */
export async function createTestBackend({
  app,
  name,
  dependencies,
  resolutions = {},
  indexJs,
  config = {},
  pgUrl,
}) {
  writeYarnProject({ dir: app, name, dependencies, resolutions });
  fs.writeFileSync(path.join(app, 'index.js'), indexJs);
  const port = await freePort();
  const token = crypto.randomBytes(24).toString('base64url');
  const prefix = `packtest_${crypto.randomBytes(4).toString('hex')}_`;
  const { backend: backendConfig, ...otherConfig } = config;
  fs.writeFileSync(
    path.join(app, 'app-config.yaml'),
    JSON.stringify({
      backend: {
        baseUrl: `http://127.0.0.1:${port}`,
        listen: { port, host: '127.0.0.1' },
        database: { client: 'pg', connection: pgUrl, prefix, pluginDivisionMode: 'database' },
        auth: { externalAccess: [{ type: 'static', options: { token, subject: 'install-test' } }] },
        ...backendConfig,
      },
      portal: { storage: 'database' },
      mcpBroker: {
        servers: [],
        sessionStore: 'database',
        // Required with the database session store (it seals the broker's shared keys).
        credentialEncryptionKey: crypto.randomBytes(32).toString('base64'),
      },
      ...otherConfig,
    }),
  );
  yarnInstall(app);
  return { app, port, token, prefix, pgUrl };
}

/**
 * Starts the backend, waits for readiness, calls GET /api/portal/apiproducts and the broker's
 * initialize, checks that both plugins' migration tables exist, runs `whileRunning` (given the
 * backend's base URL) if there is one, and stops it. Returns the backend's output; throws with
 * it on any failure; always drops the databases it created.
 */
export async function probeTestBackend({
  app,
  port,
  token,
  prefix,
  pgUrl,
  expectOutput,
  whileRunning,
}) {
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
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`backend exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/.backstage/health/v1/readiness`).then(
        r => r.ok,
        () => false,
      );
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
      headers: {
        ...auth,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'install-test', version: '1' },
        },
      }),
    });
    const initBody = await init.text();
    if (
      init.status !== 200 ||
      !init.headers.get('mcp-session-id') ||
      !initBody.includes('"protocolVersion"')
    ) {
      throw new Error(`initialize answered ${init.status}: ${initBody}`);
    }
    console.log(`POST /api/mcp-broker/mcp initialize → ${init.status}, session issued`);
    if (expectOutput) {
      // Something the backend logs on its own (e.g. a scheduled task's first run).
      const outputDeadline = Date.now() + 30_000;
      while (!expectOutput.test(output)) {
        if (Date.now() > outputDeadline)
          throw new Error(`the backend never logged ${expectOutput}`);
        await new Promise(r => setTimeout(r, 250));
      }
      console.log(`backend logged ${expectOutput}`);
    }
    await assertMigrated(pgUrl, `${prefix}portal`, 'portal_api_products');
    await assertMigrated(pgUrl, `${prefix}mcp-broker`, 'mcp_broker__knex_migrations');
    await whileRunning?.({ baseUrl: `http://127.0.0.1:${port}` });
    return output;
  } catch (error) {
    error.message += `\n--- backend output ---\n${output}`;
    throw error;
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise(r => child.once('exit', r));
    await dropDatabases(pgUrl, prefix);
  }
}

async function pgClient(connectionString) {
  const { default: pg } = await import(path.join(repoRoot, 'node_modules/pg/lib/index.js'));
  const client = new pg.Client({ connectionString });
  await client.connect();
  return client;
}

/** The plugin's database exists on the fresh server and its migrations created `table`. */
async function assertMigrated(pgUrl, database, table) {
  const url = new URL(pgUrl);
  url.pathname = `/${database}`;
  let client;
  try {
    client = await pgClient(url.toString());
  } catch (error) {
    throw new Error(`database ${database} was not created (${error.message})`);
  }
  try {
    const { rows } = await client.query('SELECT to_regclass($1) AS found', [`public.${table}`]);
    if (!rows[0].found)
      throw new Error(`database ${database} has no table ${table}: migrations did not run`);
    console.log(`database ${database}: table ${table} exists (migrations ran)`);
  } finally {
    await client.end();
  }
}

/** Drops the databases a run created (one per plugin, named with its random prefix). */
async function dropDatabases(pgUrl, prefix) {
  const client = await pgClient(pgUrl);
  try {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${prefix}%`,
    ]);
    for (const { datname } of rows)
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
