/*
 * A port for a child process that no other process can take first. "Find a free port" (bind
 * port 0, close, pass the number on) races: between the close and the child's bind, anything
 * else may take the number. Here the test process binds the port and keeps it bound; the child
 * starts with the preload `listenOnHandedOverPort.cjs` and receives the listening handle over
 * IPC, so the port is held from the first bind to the child's exit.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import net from 'node:net';

/** A bound port waiting for its child process. */
export interface HandedOverPort {
  port: number;
  /** `node` arguments that make the child listen on the handed-over port: put them first. */
  nodeArgs: string[];
  /** Environment variables the child needs (merge them into its `env`). */
  env: Record<string, string>;
  /** The `stdio` of the child: `stdio` plus the IPC channel the handle travels on. */
  stdio(stdio: Array<'ignore' | 'pipe'>): SpawnOptions['stdio'];
  /**
   * Sends the listening handle to the spawned child and lets go of this process's copy; resolves
   * when only the child holds the port (connect to it after that).
   */
  handOver(child: ChildProcess): Promise<void>;
  /** Lets go of the port when no child took it (e.g. the spawn failed). */
  close(): void;
}

/**
 * Binds a port on `host` (default loopback) for one child process: a free one, or `port` (to
 * start a successor on the port of a child that has exited, e.g. a backend "restarted" as
 * another server; fails with EADDRINUSE if something else took it meanwhile).
 */
export async function reservePortForChild(host = '127.0.0.1', port = 0): Promise<HandedOverPort> {
  // Until the handle is handed over, a connection could be accepted here: it is dropped (the
  // caller connects only after handOver resolved, so this is a safety net).
  const server = net.createServer(socket => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as net.AddressInfo).port;
  return {
    port: bound,
    nodeArgs: ['--require', require.resolve('./listenOnHandedOverPort.cjs')],
    env: { HANDED_OVER_PORT: String(bound) },
    stdio: stdio => [...stdio, 'ipc'],
    handOver(child) {
      // Once sent, the child holds its own copy of the handle: this process lets go of its copy.
      return new Promise<void>((resolve, reject) => {
        child.send('handed-over-listen-handle', server, error => {
          server.close();
          if (error) reject(error);
          else resolve();
        });
      });
    },
    close() {
      server.close();
    },
  };
}
