/*
 * Runs a bench/ script in its --smoke mode for the tests that keep the benchmarks from
 * rotting, and reads the Markdown tables the scripts print.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { resolvePackagePath } from '@backstage/backend-plugin-api';

const repoRoot = resolvePackagePath('backend', '..', '..');

/** What a smoke run printed. */
export interface SmokeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

let running: ChildProcess | undefined;

/** Stops a smoke run still going (after a timed-out test); the script stops what it started. */
export function stopRunningSmoke(): void {
  if (running && running.exitCode === null) running.kill('SIGTERM');
  running = undefined;
}

/** Runs `node <script> --smoke` from the repository root. */
export function runBenchSmoke(script: string): Promise<SmokeRun> {
  return new Promise((resolve, reject) => {
    const child = (running = spawn(process.execPath, [script, '--smoke'], {
      cwd: repoRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', chunk => {
      stdout += chunk;
    });
    child.stderr?.on('data', chunk => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('exit', code => resolve({ code, stdout, stderr }));
  });
}

/** The body rows of the first Markdown table after `heading` in `text`, as cells. */
export function tableAfter(text: string, heading: string): string[][] {
  const start = text.indexOf(heading);
  if (start < 0) return [];
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex(line => line.startsWith('|'));
  if (first < 0) return [];
  const table: string[] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    table.push(line);
  }
  // Skip the header and the `| --- |` line.
  return table.slice(2).map(line =>
    line
      .split('|')
      .slice(1, -1)
      .map(cell => cell.trim()),
  );
}
