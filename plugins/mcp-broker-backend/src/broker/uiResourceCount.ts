/*
 * How many MCP Apps UI resources a backend serves, for `/status` (docs/contracts/tasks-and-apps.md
 * §5 `apps.uiResources`): the distinct `ui://` URIs of its resources list and of its tools' UI
 * linkage (§3.1: a server may leave a UI resource out of its list; the tool that renders it
 * names it all the same). Resource templates are not resources and are not counted.
 */
import type { BackendLists } from '../backend/backendConnectionTypes';
import { isUiUri, toolUiResourceUri } from '../protocol/uiResourceUris';

/** The number of distinct UI resources in a backend's `lists` (see the file comment). */
export function uiResourceCount(lists: Pick<BackendLists, 'tools' | 'resources'>): number {
  const uris = new Set<string>();
  for (const resource of lists.resources) if (isUiUri(resource.uri)) uris.add(resource.uri);
  for (const tool of lists.tools) {
    const uri = toolUiResourceUri(tool);
    if (uri !== undefined) uris.add(uri);
  }
  return uris.size;
}
