#!/usr/bin/env node
// `yarn test`: type-check, then every Jest test once (never watch mode).
// PostgreSQL tests run when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set (as
// .ci/run does, after starting a local PostgreSQL); otherwise they are skipped with a visible message.
import { spawnSync } from 'node:child_process';

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
run('yarn', ['backstage-cli', 'repo', 'test', ...process.argv.slice(2)], { CI: 'true', BACKSTAGE_TEST_DISABLE_DOCKER: '1' });
