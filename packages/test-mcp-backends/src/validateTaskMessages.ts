/*
 * Checks task messages against the official schemas of `@modelcontextprotocol/ext-tasks`
 * (0.2.2: `/core/v2` for 2026-07-28, `/core/v1` for 2025-11-25). The package is ESM-only and
 * brings zod 4, which Jest's CommonJS runtime cannot load, so the check runs in a child Node
 * process (validateTaskMessages.mjs) that imports the package as it is published.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

/** A task message as a fixture or a test saw it, and the ext-tasks schema it must satisfy. */
export interface RecordedTaskMessage {
  /** An export of `@modelcontextprotocol/ext-tasks/core/v2` or `/core/v1`, e.g. `GetTaskResultV2Schema`. */
  schema: string;
  message: unknown;
}

/**
 * Parses each message with its schema; resolves with one line per message that does not
 * satisfy it (`#<index> <schema>: <issues>`), or an empty list.
 */
export async function validateTaskMessages(
  messages: readonly RecordedTaskMessage[],
): Promise<string[]> {
  const script = require.resolve('./validateTaskMessages.mjs');
  const child = spawn(process.execPath, [script], {
    cwd: path.dirname(script),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', chunk => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', chunk => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(JSON.stringify(messages));
  const code = await exited;
  if (code !== 0) throw new Error(`validateTaskMessages.mjs exited with ${code}: ${stderr}`);
  return JSON.parse(stdout) as string[];
}
