/*
 * @modelcontextprotocol/server-everything in streamable-HTTP mode as a child process, on a free
 * loopback port. Quirks worth knowing: it binds every interface, logs each request to stdout
 * (discarded here), answers unknown sessions with 400 rather than 404, and offers
 * `trigger-elicitation-request` only to sessions whose client declared elicitation.
 */
import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

/** A running server-everything. */
export interface EverythingServer {
  url: string;
  port: number;
  /** Kills the process at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts server-everything and waits until it answers HTTP. */
export async function startEverythingServer(options: { port?: number } = {}): Promise<EverythingServer> {
  const port = options.port ?? (await freePort());
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child: ChildProcess = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
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
    if (child.exitCode !== null) throw new Error(`server-everything exited during start: ${stderr}`);
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
