/*
 * One of the repository's example MCP servers (@internal/example-mcp-server) as a child process
 * on a port handed over to it (handedOverPort.ts in @internal/test-mcp-backends): the legacy
 * (SDK 1.x, sessions) or the modern (SDK v2, stateless) one. Passing the port of a server that
 * has exited starts its successor at the same URL: a backend restarted, possibly in another
 * protocol era.
 */
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { reservePortForChild } from '@internal/test-mcp-backends';

/** A running example server process. */
export interface ExampleServerProcess {
  url: string;
  port: number;
  /** Kills the process (SIGKILL, as a crash would) and waits for its exit. */
  kill(): Promise<void>;
}

/** Starts the legacy or modern example server and waits until it answers HTTP. */
export async function startExampleServerProcess(
  era: 'legacy' | 'modern',
  port?: number,
): Promise<ExampleServerProcess> {
  const reserved = await reservePortForChild('127.0.0.1', port);
  const packageDir = path.dirname(require.resolve('@internal/example-mcp-server/package.json'));
  const main = path.join(packageDir, 'src', era === 'legacy' ? 'main.ts' : 'modernMain.ts');
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...reserved.nodeArgs,
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs'),
      main,
    ],
    {
      env: { ...process.env, ...reserved.env, PORT: String(reserved.port) },
      stdio: reserved.stdio(['ignore', 'ignore', 'pipe']),
    },
  );
  await reserved.handOver(child);
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
  const url = `http://127.0.0.1:${reserved.port}/mcp`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`example server exited during start: ${stderr}`);
    try {
      // Any HTTP answer means it listens (the handed-over handle drops connections until then).
      await fetch(url, { method: 'DELETE' });
      break;
    } catch {
      if (Date.now() > deadline) {
        await kill();
        throw new Error(`example server did not listen within 30 s: ${stderr}`);
      }
      await new Promise(resolve => setTimeout(resolve, 100));
    }
  }
  return { url, port: reserved.port, kill };
}
