/*
 * The grant sources modules add through `mcpAccessGrantsExtensionPoint` (plugin
 * `@devportal/plugin-mcp-broker-node`; docs/contracts/mcp-access.md §5.1). Registered while the
 * backend wires its features; started once the broker's database is ready, each with a writer
 * of its own (grantSourceWriter: its grants under its prefix, checked). Two sources with one id
 * fail start-up; a source whose `start` fails is logged and the broker starts without its
 * changes (a full sync repairs what it missed).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  McpAccessGrantSource,
  McpAccessGrantsExtensionPoint,
} from '@devportal/plugin-mcp-broker-node';
import type { AccessGrantStore } from './AccessGrantStore';
import { checkGrantSourceId, grantSourceWriter } from './grantSourceWriter';

/** The extension point's implementation; see the file comment. */
export class AccessGrantSources implements McpAccessGrantsExtensionPoint {
  readonly #sources = new Map<string, McpAccessGrantSource>();

  addGrantSource(source: McpAccessGrantSource): void {
    checkGrantSourceId(source.id);
    if (this.#sources.has(source.id)) {
      throw new Error(
        `Two MCP access grant sources have the id "${source.id}"; each module must use its own`,
      );
    }
    this.#sources.set(source.id, source);
  }

  /** The sources added so far. */
  list(): McpAccessGrantSource[] {
    return [...this.#sources.values()];
  }

  /** Starts every source with its writer over `store` (`onWritten`: see grantSourceWriter). */
  async start(
    store: AccessGrantStore,
    logger: LoggerService,
    onWritten?: () => Promise<void>,
  ): Promise<void> {
    await Promise.all(
      this.list().map(async source => {
        try {
          await source.start(grantSourceWriter(source.id, store, onWritten));
        } catch (error) {
          logger.error(
            `MCP access grant source "${source.id}" failed to start; its changes are not followed: ${error}`,
          );
        }
      }),
    );
  }
}
