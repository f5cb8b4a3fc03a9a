#!/usr/bin/env node
// `yarn start`: the example MCP servers (2025-11-25 on port 3101, 2026-07-28 on 3103), the
// backend (7007) and the development app (packages/app, http://localhost:3000) side by side;
// Ctrl-C stops them all.
import { spawn } from 'node:child_process';

const children = [
  ['example-mcp-server', ['workspace', '@internal/example-mcp-server', 'start']],
  ['modern-example-mcp-server', ['workspace', '@internal/example-mcp-server', 'start:modern']],
  ['backend', ['workspace', 'backend', 'start']],
  ['app', ['workspace', 'app', 'start']],
].map(([name, args]) => {
  const child = spawn('yarn', args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
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
