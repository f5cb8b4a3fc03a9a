/*
 * What the tests that start a child process share (the development backend, the development
 * app's dev server, the conformance script, the child-process MCP servers of childServer.ts): collect what it prints, for the failure message of
 * a test, and stop it — SIGTERM first, SIGKILL when it has not exited after a grace period, or
 * SIGKILL at once as a crash would. A process that runs its own children (the app's bundler
 * workers) is started in its own process group (`detached: true`) and stopped as a group, so
 * that no worker outlives it.
 */
import type { ChildProcess } from 'node:child_process';

/** How long {@link SupervisedChildProcess.stop} waits after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** Options of {@link superviseChildProcess}. */
export interface SuperviseChildProcessOptions {
  /**
   * Signal the child's whole process group instead of the child alone; the child must have been
   * spawned with `detached: true` (it leads its group then). Default false.
   */
  processGroup?: boolean;
  /** Runs after every `stop()` and `kill()`, once the process is gone (e.g. removes temp files). */
  afterExit?(): void;
}

/** A child process whose output is collected and that can be stopped. */
export interface SupervisedChildProcess {
  /** Everything the process printed on stdout and stderr so far, in order of arrival. */
  output(): string;
  /** Resolves once the process has exited. */
  readonly exited: Promise<void>;
  /** Ends the process (SIGTERM, SIGKILL after a grace period) and waits until it has exited. */
  stop(): Promise<void>;
  /** Kills the process at once (SIGKILL: no shutdown hooks) and waits until it has exited. */
  kill(): Promise<void>;
}

/**
 * Collects the output of a spawned child (stdio `pipe` for stdout and stderr) and stops it on
 * request; call it right after the child is spawned (or handed its port), before it can print.
 */
export function superviseChildProcess(
  child: ChildProcess,
  options: SuperviseChildProcessOptions = {},
): SupervisedChildProcess {
  let output = '';
  child.stdout?.on('data', chunk => {
    output += chunk;
  });
  child.stderr?.on('data', chunk => {
    output += chunk;
  });
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = (name: NodeJS.Signals) => {
    if (options.processGroup) process.kill(-child.pid!, name);
    else child.kill(name);
  };

  return {
    output: () => output,
    exited,
    async stop() {
      if (running()) {
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      options.afterExit?.();
    },
    async kill() {
      if (running()) {
        signal('SIGKILL');
        await exited;
      }
      options.afterExit?.();
    },
  };
}
