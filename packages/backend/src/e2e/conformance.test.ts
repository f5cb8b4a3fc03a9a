/*
 * Runs scripts/conformance.mjs: the MCP conformance suite's server scenarios through the broker
 * (real backend process, one backend with toolPrefix "", baseline of deliberate refusals in
 * scripts/conformance/broker-expected-failures.yaml). The script's own output is shown on failure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

describe('MCP conformance through the broker', () => {
  it('passes every server scenario except the baseline’s deliberate refusals', async () => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'scripts', 'conformance.mjs')], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', chunk => {
      output += chunk;
    });
    child.stderr.on('data', chunk => {
      output += chunk;
    });
    const code = await new Promise<number | null>(resolve => child.on('exit', resolve));
    if (code !== 0) throw new Error(`scripts/conformance.mjs exited with ${code}:\n${output}`);
    // The baseline lists one scenario per `  - name` line.
    const baseline = fs
      .readFileSync(
        path.join(repoRoot, 'scripts/conformance/broker-expected-failures.yaml'),
        'utf8',
      )
      .split('\n')
      .filter(line => /^\s+- \S/.test(line));
    expect(baseline.length).toBeGreaterThan(0);
    expect(output).toMatch(new RegExp(`Total: \\d+ passed, ${baseline.length} failed`));
    expect(output).toContain(
      'green: every scenario passed or failed exactly as the baseline expects',
    );
  }, 240_000);
});
