#!/usr/bin/env node
// `yarn start`: the example MCP servers (2025-11-25 on port 3101, 2026-07-28 on 3103), the
// `jobs` server of long-running tasks (3104) and the two official MCP Apps example servers (3105,
// 3106; these three are fixtures of packages/test-mcp-backends, run in one process started with
// node itself: each extra process, a `yarn` above all, slows the backend's start), the backend
// (7007) and the development app (packages/app, http://localhost:3000) side by side;
// Ctrl-C stops them all. Once the fixture users can sign in and the broker has connected the
// example servers, it prints one line that starts with `Ready:` (the README's walkthroughs work
// from then on).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DEV_BACKEND_URL, untilDeadline, untilReady } from './lib/devBackend.mjs';

/** The repository's root: where the children run, whatever directory this was started from. */
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The development app (packages/app, `app.baseUrl` in app-config.yaml). */
const DEV_APP_URL = 'http://localhost:3000';

/** How long the backend may take to become ready before `yarn start` says it did not. */
const READY_DEADLINE_MS = 5 * 60_000;

const children = [
  ['example-mcp-server', 'yarn', ['workspace', '@internal/example-mcp-server', 'start']],
  [
    'modern-example-mcp-server',
    'yarn',
    ['workspace', '@internal/example-mcp-server', 'start:modern'],
  ],
  [
    'jobs-and-app-servers',
    process.execPath,
    [
      '--require',
      '@backstage/cli/config/nodeTransform.cjs',
      'packages/test-mcp-backends/src/developmentServersMain.ts',
    ],
  ],
  ['backend', 'yarn', ['workspace', 'backend', 'start']],
  ['app', 'yarn', ['workspace', 'app', 'start']],
].map(([name, command, args]) => {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.on('data', chunk => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) process.stdout.write(`[${name}] ${line}\n`);
    });
  }
  return { name, child };
});

let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
}
for (const { name, child } of children) {
  child.on('exit', code => {
    if (!stopping) {
      process.stderr.write(`${name} exited with code ${code}; stopping the rest\n`);
      stopAll(code ?? 1);
    }
  });
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const readyBy = Date.now() + READY_DEADLINE_MS;
untilReady(DEV_BACKEND_URL, readyBy)
  .then(() =>
    untilDeadline(readyBy, 'the development app serving its page', async () => {
      const response = await fetch(DEV_APP_URL);
      if (!response.ok) throw new Error(`${DEV_APP_URL} answers ${response.status}`);
    }),
  )
  .then(
    () => {
      if (stopping) return;
      process.stdout.write(
        `Ready: open ${DEV_APP_URL} and sign in as alice, bob, carol, dave or erin; the ` +
          'development backend is up on http://localhost:7007 with the example, jobs and MCP ' +
          'App servers connected (README: "Sign in as a fixture user").\n',
      );
    },
    error => {
      if (!stopping) process.stderr.write(`Not ready: ${error.message}\n`);
    },
  );
