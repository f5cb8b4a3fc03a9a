#!/usr/bin/env node
// `yarn test`: the whole suite, once (never watch mode):
//   1. type check (`yarn tsc`, which also writes dist-types/);
//   2. API reports (`yarn build:api-reports --ci`): each published package's report.api.md must
//      match its current public API (from dist-types/); run `yarn build:api-reports` and commit
//      the reports when it changes on purpose;
//   3. every Jest test (`backstage-cli repo test`);
//   4. the pack-and-install test (scripts/pack-install-test.mjs): the published plugins packed
//      and installed into a separate minimal Backstage backend.
// PostgreSQL tests run when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set (as
// .ci/run does, after starting a local PostgreSQL); otherwise they are skipped with a visible
// message. Extra arguments go to Jest (e.g. a path pattern) and then skip step 4.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const jestArgs = process.argv.slice(2);
const env = { ...process.env, CI: 'true', BACKSTAGE_TEST_DISABLE_DOCKER: '1' };

function run(command, args) {
  process.stdout.write(`\n$ ${command} ${args.join(' ')}\n`);
  return spawnSync(command, args, { stdio: 'inherit', env }).status ?? 1;
}

if (!process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING) {
  process.stdout.write(
    'note: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set, so the PostgreSQL half ' +
      'of the database tests and the pack-and-install test are skipped (.ci/run installs PostgreSQL ' +
      'and sets it)\n',
  );
}
if (run('yarn', ['tsc']) !== 0) process.exit(1);
if (run('yarn', ['build:api-reports', '--ci']) !== 0) {
  process.stdout.write('API reports are stale: run `yarn build:api-reports` and commit the report.api.md changes\n');
  process.exit(1);
}

// Jest's JSON report gives the counts for one plain closing line over every step.
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jest-report-'));
const reportFile = path.join(reportDir, 'report.json');
const jestStatus = run('yarn', ['backstage-cli', 'repo', 'test', '--json', `--outputFile=${reportFile}`, ...jestArgs]);
const counts = { passed: 0, failed: jestStatus === 0 ? 0 : 1, skipped: 0 };
if (fs.existsSync(reportFile)) {
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  counts.passed = report.numPassedTests;
  counts.failed = Math.max(report.numFailedTests, jestStatus === 0 ? 0 : 1);
  counts.skipped = report.numPendingTests + report.numTodoTests;
}
fs.rmSync(reportDir, { recursive: true, force: true });

let packStatus = 0;
if (jestArgs.length === 0 && process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING) {
  packStatus = run('node', ['scripts/pack-install-test.mjs']);
  counts[packStatus === 0 ? 'passed' : 'failed'] += 1;
}

process.stdout.write(`\ntotal: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
process.exit(jestStatus !== 0 || packStatus !== 0 ? 1 : 0);
