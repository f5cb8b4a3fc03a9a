/*
 * Keeps bench/broker.mjs from rotting: runs its --smoke mode (the real backend process,
 * server-everything, the example server and mcp-hub; a few dozen calls, 20 sessions) and
 * checks that it finishes and prints its tables. Timings of a smoke run mean nothing and are
 * not asserted; what does not depend on the machine is: every call completed on every
 * target, every stream got the notification, every session was deleted with 204.
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

let running: ChildProcess | undefined;

// A timed-out run is stopped with SIGTERM; the script then stops the processes it started.
afterEach(() => {
  if (running && running.exitCode === null) running.kill('SIGTERM');
  running = undefined;
});

function runSmoke(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = (running = spawn(process.execPath, ['bench/broker.mjs', '--smoke'], {
      cwd: repoRoot,
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', chunk => {
      stdout += chunk;
    });
    child.stderr.on('data', chunk => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('exit', code => resolve({ code, stdout, stderr }));
  });
}

/** The body rows of the first Markdown table after `heading` in `text`, as cells. */
function tableAfter(text: string, heading: string): string[][] {
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
  return table.slice(2).map(line => line.split('|').slice(1, -1).map(cell => cell.trim()));
}

describe('bench/broker.mjs --smoke (real backend, server-everything, example server, mcp-hub)', () => {
  it('completes every call, delivers every notification, deletes every session and prints its tables', async () => {
    const { code, stdout, stderr } = await runSmoke();
    if (code !== 0) {
      throw new Error(`bench/broker.mjs --smoke exited with ${code}:\n${stderr.slice(-4000)}\n${stdout}`);
    }

    const calls = tableAfter(stdout, '### tools/call `echo`');
    expect(calls.map(([mode, target, callCount]) => [mode, target, callCount])).toEqual([
      ['sequential', 'direct', '20'],
      ['sequential', 'broker', '20'],
      ['sequential', 'mcp-hub', '20'],
      ['sequential', 'broker, static token', '20'],
      ['10 in flight', 'direct', '40'],
      ['10 in flight', 'broker', '40'],
      ['10 in flight', 'mcp-hub', '40'],
      ['10 in flight', 'broker, static token', '40'],
    ]);
    for (const row of calls) {
      expect(Number(row[3])).toBeGreaterThan(0); // calls/s
      expect(Number(row.at(-1))).toBeGreaterThan(0); // the load generator's CPU per call
    }
    expect(stdout).toMatch(/broker ÷ direct throughput, 10 in flight \| \d+\.\d\d×/);

    const fanout = tableAfter(stdout, '### Fan-out');
    expect(fanout.map(([streams, triggers, delivered]) => [streams, triggers, delivered])).toEqual([['20', '1', '20 / 20']]);

    const memory = tableAfter(stdout, '### Memory');
    expect(memory).toHaveLength(1);
    expect(memory[0][0]).toBe('20');
    expect(memory[0][6]).toBe('20'); // DELETE answered 204 for every session

    const elicitation = tableAfter(stdout, '### Elicitation round trip');
    expect(elicitation.map(([target, roundTrips]) => [target, roundTrips])).toEqual([
      ['direct', '4'],
      ['broker', '4'],
    ]);
    // ~25 s alone; the limit leaves room for a machine busy with the rest of the suite.
  }, 150_000);
});
