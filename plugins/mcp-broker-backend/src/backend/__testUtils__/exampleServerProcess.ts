/*
 * One of the repository's example MCP servers (@internal/example-mcp-server) as a child process
 * on a port handed over to it (`startChildServer` of @internal/test-mcp-backends): the legacy
 * (SDK 1.x, sessions) or the modern (SDK v2, stateless) one. Passing the port of a server that
 * has exited starts its successor at the same URL: a backend restarted, possibly in another
 * protocol era.
 */
import path from 'node:path';
import { ChildServer, startChildServer } from '@internal/test-mcp-backends';

/** Starts the legacy or modern example server and waits until it answers HTTP. */
export async function startExampleServerProcess(
  era: 'legacy' | 'modern',
  port?: number,
): Promise<ChildServer> {
  const packageDir = path.dirname(require.resolve('@internal/example-mcp-server/package.json'));
  return startChildServer({
    name: `the ${era} example server`,
    args: [
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs'),
      path.join(packageDir, 'src', era === 'legacy' ? 'main.ts' : 'modernMain.ts'),
    ],
    port,
    startTimeoutMs: 30_000,
  });
}
