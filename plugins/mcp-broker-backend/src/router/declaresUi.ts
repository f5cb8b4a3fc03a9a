/*
 * Whether the client behind a request can render MCP Apps: it declared the extension
 * `io.modelcontextprotocol/ui` — in its session's `initialize` (2025-11-25) or in the request's
 * `_meta` client capabilities (2026-07-28). Decides which tools it sees and may call
 * (docs/contracts/tasks-and-apps.md §3.5).
 */
import { declaredUiExtension } from '../protocol/uiExtension';
import type { McpRequest } from './mcpRequest';

/** True when the request's client declared `io.modelcontextprotocol/ui`. */
export function declaresUi(request: McpRequest): boolean {
  const capabilities = request.session?.clientCapabilities ?? request.context?.clientCapabilities;
  return declaredUiExtension(capabilities) !== undefined;
}
