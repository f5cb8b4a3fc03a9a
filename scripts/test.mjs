#!/usr/bin/env node
// `yarn test`: type-check, then every Jest test once (never watch mode).
// PostgreSQL tests run when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set (as
// .ci/run does, after starting a local PostgreSQL); otherwise they are skipped with a visible message.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function run(command, args, env = {}) {
  process.stdout.write(`\n$ ${command} ${args.join(' ')}\n`);
  const result = spawnSync(command, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (!process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING) {
  process.stdout.write(
    'note: BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is not set, so the PostgreSQL half ' +
      'of the database tests is skipped (.ci/run installs PostgreSQL and sets it)\n',
  );
}
run('yarn', ['tsc']);

// Jest's own summary is printed as usual; the JSON report gives one plain closing line
// ("jest: N passed, N failed, N skipped") that CI systems read regardless of the runner.
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jest-report-'));
const reportFile = path.join(reportDir, 'report.json');
const jest = spawnSync(
  'yarn',
  ['backstage-cli', 'repo', 'test', '--json', `--outputFile=${reportFile}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, CI: 'true', BACKSTAGE_TEST_DISABLE_DOCKER: '1' } },
);
if (fs.existsSync(reportFile)) {
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
  const skipped = report.numPendingTests + report.numTodoTests;
  process.stdout.write(
    `\njest: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped\n`,
  );
}
fs.rmSync(reportDir, { recursive: true, force: true });
process.exit(jest.status ?? 1);
