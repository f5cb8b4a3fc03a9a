/*
 * An address where nothing answers, for tests of "the server cannot be reached": a TCP server on
 * a port the system chose that destroys every connection as soon as it is accepted, before a byte
 * is read or written. Unlike "port 1 is closed" or "a port we bound and released", no other
 * process can take the port while the test holds it, so the outcome is the same on every
 * machine. Clients see a reset connection (ECONNRESET / "socket hang up" / "other side closed").
 */
import net from 'node:net';

/** A running {@link startUnreachableServer}. */
export interface UnreachableServer {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  port: number;
  /** How many connections it accepted (and destroyed) so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a server on 127.0.0.1 that destroys every connection at once. */
export async function startUnreachableServer(): Promise<UnreachableServer> {
  let accepted = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer(socket => {
    accepted++;
    socket.destroy();
  });
  server.on('connection', socket => sockets.add(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    connections: () => accepted,
    close: () =>
      new Promise<void>(resolve => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
