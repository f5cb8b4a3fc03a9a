/*
 * The example MCP servers of both protocol eras as one fleet for the broker's end-to-end tests
 * (re-exported by brokerTestKit.ts; kept here because the servers are a dev dependency).
 */
import {
  ExampleMcpServer,
  ModernExampleMcpServer,
  startExampleMcpServer,
  startModernExampleMcpServer,
} from '@internal/example-mcp-server';

/**
 * The repository's example servers of both protocol eras, in this process: `legacy`
 * (2025-11-25, SDK 1.x, sessions) and `modern` (2026-07-28, SDK v2, stateless). `servers` is the
 * `mcpBroker.servers` config for them, named `example` and `modern`.
 */
export interface ExampleFleet {
  legacy: ExampleMcpServer;
  modern: ModernExampleMcpServer;
  servers: Array<{ name: string; url: string }>;
  close(): Promise<void>;
}

/** Starts both example servers on free ports. */
export async function startExampleFleet(): Promise<ExampleFleet> {
  const legacy = await startExampleMcpServer({ port: 0 });
  const modern = await startModernExampleMcpServer({ port: 0, legacy: 'reject' }).catch(
    async error => {
      await legacy.close();
      throw error;
    },
  );
  return {
    legacy,
    modern,
    servers: [
      { name: 'example', url: legacy.url },
      { name: 'modern', url: modern.url },
    ],
    async close() {
      await Promise.all([legacy.close(), modern.close()]);
    },
  };
}
