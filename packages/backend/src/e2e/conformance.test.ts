/*
 * Runs scripts/conformance.mjs: the MCP conformance suite's server scenarios through the broker
 * (real backend process, one backend with toolPrefix ""), once per protocol era, each against its
 * baseline of deliberate refusals (scripts/conformance/broker-expected-failures*.yaml). The
 * script's own output is shown on failure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { superviseChildProcess } from '@internal/test-mcp-backends';

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

/** Runs the script for one era; resolves with its output, or fails showing it. */
async function runThroughBroker(era: string): Promise<string> {
  const script = path.join(repoRoot, 'scripts', 'conformance.mjs');
  const child = spawn(process.execPath, [script, '--era', era], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output, exited } = superviseChildProcess(child);
  await exited;
  if (child.exitCode !== 0) {
    throw new Error(
      `scripts/conformance.mjs --era ${era} exited with ${child.exitCode}:\n${output()}`,
    );
  }
  return output();
}

/** The scenarios a baseline lists (one per `  - name` line). */
function baselineScenarios(file: string): string[] {
  return fs
    .readFileSync(path.join(repoRoot, 'scripts', 'conformance', file), 'utf8')
    .split('\n')
    .filter(line => /^\s+- \S/.test(line));
}

describe('MCP conformance through the broker', () => {
  it('passes every 2025-11-25 server scenario except the baseline’s deliberate refusals', async () => {
    const output = await runThroughBroker('2025-11-25');
    const baseline = baselineScenarios('broker-expected-failures.yaml');
    expect(baseline.length).toBeGreaterThan(0);
    expect(output).toMatch(new RegExp(`Total: \\d+ passed, ${baseline.length} failed`));
    expect(output).toContain(
      'green: every scenario passed or failed exactly as the baseline expects',
    );
  }, 240_000);

  it('passes every scored 2026-07-28 requirement (an empty baseline)', async () => {
    const output = await runThroughBroker('2026-07-28');
    expect(output).toContain('protocol 2026-07-28: conformance-next on');
    expect(output).toContain(
      'green: every scenario passed or failed exactly as the baseline expects (2026-07-28)',
    );
    // The baseline is empty: only the unscored tasks-* extension scenarios may fail.
    expect(baselineScenarios('broker-expected-failures-2026-07-28.yaml')).toEqual([]);
    // The two that were the last to pass (#18): non-tool input_required, -32021 as HTTP 400.
    expect(output).toMatch(/✓ input-required-result-non-tool-request: \d+ passed, 0 failed/);
    expect(output).toMatch(/✓ server-stateless: \d+ passed, 0 failed/);
  }, 240_000);
});
