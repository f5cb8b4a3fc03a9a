/*
 * One interactive-like bash for running a README's walkthrough step by step: variables,
 * functions and the working directory carry over between steps, as in a reader's terminal.
 * Each step's standard output is collected up to a random marker that bash prints after the step
 * with its exit status; standard error is collected alongside (for a failure's explanation).
 * Steps read nothing from the session's own input (`< /dev/null`), so a command that reads
 * standard input cannot swallow the steps after it.
 */
import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import crypto from 'node:crypto';

/** What one step printed and how it ended. */
export interface StepResult {
  stdout: string;
  stderr: string;
  /** The step's exit status (the last command's, as `$?` would say). */
  status: number;
}

/** A running bash; {@link BashSession.run} runs one step at a time. */
export class BashSession {
  readonly #child: ChildProcessWithoutNullStreams;
  #stdout = '';
  #stderr = '';
  #exited = false;
  #onData: (() => void) | undefined;

  /** Starts bash in `cwd` with exactly `env` (a newcomer's environment, not the test's). */
  constructor(cwd: string, env: Record<string, string>) {
    this.#child = spawn('bash', ['--noprofile', '--norc'], { cwd, env });
    this.#child.stdout.on('data', chunk => {
      this.#stdout += chunk;
      this.#onData?.();
    });
    this.#child.stderr.on('data', chunk => {
      this.#stderr += chunk;
      this.#onData?.();
    });
    this.#child.once('exit', () => {
      this.#exited = true;
      this.#onData?.();
    });
  }

  /** Runs `code`; rejects when bash exits or the step takes longer than `timeoutMs`. */
  async run(code: string, timeoutMs: number): Promise<StepResult> {
    if (this.#exited) throw new Error('the shell has exited');
    const marker = `__step_end_${crypto.randomBytes(8).toString('hex')}__`;
    const end = new RegExp(`\\n${marker} (\\d+)\\n`);
    this.#stdout = '';
    this.#stderr = '';
    const errorEnd = `\n${marker}\n`;
    // The status first (into a variable), then the marker on both streams: the step is over
    // once both carry it, so what it wrote to standard error is all there too.
    this.#child.stdin.write(
      `{\n${code}\n} < /dev/null\n__doctest_status=$?\nprintf '\\n${marker}\\n' >&2\n` +
        `printf '\\n${marker} %d\\n' "$__doctest_status"\n`,
    );
    return new Promise<StepResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#onData = undefined;
        reject(
          new Error(
            `the step did not finish within ${timeoutMs} ms; output so far:\n${this.#stdout}\n` +
              `standard error:\n${this.#stderr}`,
          ),
        );
      }, timeoutMs);
      this.#onData = () => {
        const found = end.exec(this.#stdout);
        const errorAt = this.#stderr.indexOf(errorEnd);
        if (found && errorAt !== -1) {
          clearTimeout(timer);
          this.#onData = undefined;
          resolve({
            stdout: this.#stdout.slice(0, found.index),
            stderr: this.#stderr.slice(0, errorAt),
            status: Number(found[1]),
          });
        } else if (this.#exited) {
          clearTimeout(timer);
          this.#onData = undefined;
          reject(new Error(`the shell exited during the step:\n${this.#stdout}\n${this.#stderr}`));
        }
      };
      this.#onData();
    });
  }

  /** Ends bash and whatever the steps left running in the background of this session. */
  async close(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise(resolve => this.#child.once('exit', resolve));
    this.#child.stdin.end('kill $(jobs -p) 2>/dev/null\nexit 0\n');
    await exited;
  }
}
