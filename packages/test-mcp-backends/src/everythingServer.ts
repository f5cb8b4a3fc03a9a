/*
 * @modelcontextprotocol/server-everything in streamable-HTTP mode as a child process, on a
 * loopback port reserved for it (handedOverPort.ts). Quirks worth knowing: on a port of its own
 * it binds every interface; it logs each request to stdout (discarded here), answers unknown
 * sessions with 400 rather than 404, and offers `trigger-elicitation-request` only to sessions
 * whose client declared elicitation.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { reservePortForChild } from './handedOverPort';

/** A running server-everything. */
export interface EverythingServer {
  url: string;
  port: number;
  /** Kills the process at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
}

/** Starts server-everything and waits until it answers HTTP. */
export async function startEverythingServer(
  options: { port?: number } = {},
): Promise<EverythingServer> {
  // A port of our own, held until the child listens on it (see handedOverPort.ts).
  const reserved = options.port === undefined ? await reservePortForChild() : undefined;
  const port = options.port ?? reserved!.port;
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const args = [...(reserved?.nodeArgs ?? []), entry, 'streamableHttp'];
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, ...reserved?.env, PORT: String(port) },
    stdio: reserved ? reserved.stdio(['ignore', 'ignore', 'pipe']) : ['ignore', 'ignore', 'pipe'],
  });
  await reserved?.handOver(child);
  let stderr = '';
  child.stderr?.on('data', chunk => {
    stderr += chunk;
  });
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`server-everything exited during start: ${stderr}`);
    try {
      await fetch(url, { method: 'GET' });
      break;
    } catch {
      if (Date.now() > deadline) {
        await kill();
        throw new Error(`server-everything did not listen within 20 s: ${stderr}`);
      }
      await new Promise(resolve => setTimeout(resolve, 100));
    }
  }
  return { url, port, kill };
}
