/*
 * An MCP server as a child process on a port handed over to it (handedOverPort.ts): spawned with
 * the preload first, waited for until it answers HTTP, killed like a crash. Used for servers that
 * must run in a process of their own (server-everything, the example servers across restarts).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { reservePortForChild } from './handedOverPort';
import { superviseChildProcess } from './superviseChildProcess';

/** How long one readiness probe may wait for an answer before the next is sent. */
const READY_ATTEMPT_TIMEOUT_MS = 2_000;

/** A running child-process server. */
export interface ChildServer {
  /** Its MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  /** Kills the process at once (SIGKILL), as a crash would, and waits for its exit. */
  kill(): Promise<void>;
}

/** Options of {@link startChildServer}. */
export interface ChildServerOptions {
  /** Named in errors. */
  name: string;
  /** `node` arguments after the preload: the entry script and its arguments. */
  args: string[];
  /** The port: a free one when absent, else this one (a successor of an exited server). */
  port?: number;
  /** Extra environment (`PORT` is set to the port). */
  env?: Record<string, string>;
  /** How long to wait for it to answer HTTP; default 20 s. */
  startTimeoutMs?: number;
}

/** Starts the child and resolves once it answers HTTP on its port. */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  const reserved = await reservePortForChild('127.0.0.1', options.port);
  const child: ChildProcess = spawn(process.execPath, [...reserved.nodeArgs, ...options.args], {
    env: { ...process.env, ...options.env, ...reserved.env, PORT: String(reserved.port) },
    stdio: reserved.stdio(['ignore', 'ignore', 'pipe']),
  });
  await reserved.handOver(child);
  // stdout is ignored: what it collects is stderr, for the errors below.
  const { output: stderr, kill } = superviseChildProcess(child);
  const url = `http://127.0.0.1:${reserved.port}/mcp`;
  const timeoutMs = options.startTimeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`${options.name} exited during start: ${stderr()}`);
    }
    try {
      // Any HTTP answer means it listens (the handed-over handle drops connections until then).
      // Each attempt is bounded: a connection taken before the server listened may never be
      // answered, and the start deadline must hold all the same.
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(READY_ATTEMPT_TIMEOUT_MS) });
      break;
    } catch {
      if (Date.now() > deadline) {
        await kill();
        throw new Error(`${options.name} did not listen within ${timeoutMs} ms: ${stderr()}`);
      }
      await new Promise(resolve => setTimeout(resolve, 100));
    }
  }
  return { url, port: reserved.port, kill };
}
