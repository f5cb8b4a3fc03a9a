/*
 * The MCP Apps extension `io.modelcontextprotocol/ui` as the broker negotiates it
 * (docs/contracts/tasks-and-apps.md §3.4–§3.5). A client (host) that can render apps declares
 * `capabilities.extensions["io.modelcontextprotocol/ui"] = { mimeTypes: [...] }` — in
 * `initialize` (2025-11-25, where ext-apps puts it although that revision has no `extensions`
 * slot) or in each request's `_meta` client capabilities (2026-07-28). The broker declares it to
 * backends for its own catalog connection (so servers that register UI tools only for UI hosts
 * list them) and relays each client's own declaration on that client's calls; a client that did
 * not declare it is a plain agent, which does not see app-only tools (`_meta.ui.visibility`
 * without `"model"`).
 */
import { isPlainObject } from './jsonRpc';

/** The extension's identifier (reserved by ext-apps). */
export const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui';

/** The MIME type of an MCP App's HTML. */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';

/** What the broker declares to backends for its catalog: it relays apps of this MIME type. */
export const BROKER_UI_EXTENSION: Readonly<Record<string, unknown>> = Object.freeze({
  mimeTypes: Object.freeze([MCP_APP_MIME_TYPE]),
});

/** The client's `io.modelcontextprotocol/ui` declaration (an object), if it made one. */
export function declaredUiExtension(
  capabilities: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  const extensions = capabilities?.extensions;
  if (!isPlainObject(extensions)) return undefined;
  const ui = extensions[UI_EXTENSION_ID];
  return isPlainObject(ui) ? ui : undefined;
}

/**
 * True when a tool (a `tools/list` item) may be called by apps only: its `_meta.ui.visibility`
 * is an array without `"model"` (absent means both, ext-apps' default).
 */
export function isAppOnlyTool(tool: Record<string, unknown>): boolean {
  const meta = tool._meta;
  if (!isPlainObject(meta) || !isPlainObject(meta.ui)) return false;
  const visibility = meta.ui.visibility;
  return Array.isArray(visibility) && !visibility.includes('model');
}

/**
 * True when apps may call a tool (a `tools/list` item): its `_meta.ui.visibility` is absent or
 * includes `"app"` (ext-apps: absent means both).
 */
export function isAppCallableTool(tool: Record<string, unknown>): boolean {
  const meta = tool._meta;
  if (!isPlainObject(meta) || !isPlainObject(meta.ui)) return true;
  const visibility = meta.ui.visibility;
  return !Array.isArray(visibility) || visibility.includes('app');
}
