/*
 * The broker's names for MCP Apps UI resources (docs/contracts/tasks-and-apps.md §3.2–§3.3).
 * Two backends may both serve `ui://get-time/mcp-app.html` (the official example app servers
 * do), so a backend's UI URI is shown to clients as `ui://<server>/<rest>` where the backend's
 * own URI is `ui://<rest>`: the server's name and a slash inserted after the scheme, nothing
 * else changed. Server names are unique and hold no `/`, so two servers never share a broker UI
 * URI, and the way back (strip `ui://<server>/`, put back `ui://`) is exact for any `rest` —
 * no parsing, decoding or re-encoding (empty authority, queries, fragments and
 * percent-encodings all survive). Templates are rewritten the same way (the inserted literal
 * comes before any RFC 6570 expression). Only values that start with exactly `ui://` are UI
 * URIs (case-sensitive, as the ext-apps SDK checks); every other URI is left alone.
 *
 * Outbound, a backend's message is copied with its UI URIs rewritten in the fields ext-apps
 * names: a tool's `_meta.ui.resourceUri` and the deprecated flat `_meta["ui/resourceUri"]`, and
 * in results the `uri` of `resource_link` and embedded `resource` content blocks (also inside
 * `prompts/get` messages), `resources/read` `contents[].uri`, and a result's own `_meta` UI URI.
 * Text, `structuredContent` and HTML bodies are never touched: an app's HTML is served byte for
 * byte. Copies are made only where something changes.
 */
import { isPlainObject } from './jsonRpc';

/** The scheme prefix that makes a URI a UI resource URI (reserved by ext-apps). */
export const UI_URI_PREFIX = 'ui://';

/** The `_meta` member ext-apps nests UI metadata under (`_meta.ui.resourceUri`). */
const UI_META_KEY = 'ui';
/** The deprecated flat `_meta` key for a tool's UI resource (ext-apps `RESOURCE_URI_META_KEY`). */
const FLAT_RESOURCE_URI_META_KEY = 'ui/resourceUri';

/** True when `value` is a UI resource URI (or template): a string starting with `ui://`. */
export function isUiUri(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(UI_URI_PREFIX);
}

/**
 * The broker's name of `server`'s URI (or URI template): `ui://<server>/<rest>` for a UI URI
 * `ui://<rest>`, any other URI unchanged.
 */
export function brokerUiUri(server: string, uri: string): string {
  return isUiUri(uri) ? `${UI_URI_PREFIX}${server}/${uri.slice(UI_URI_PREFIX.length)}` : uri;
}

/** A broker UI URI taken apart: the server it names and that server's own URI. */
export interface QualifiedUiUri {
  readonly server: string;
  /** The URI as the server knows it (`ui://<rest>`). */
  readonly uri: string;
}

/**
 * Reads `uri` as a broker UI URI `ui://<server>/<rest>` whose authority is a server for which
 * `isServer` holds; undefined for any other URI (not a UI URI, no `/` after the authority, or
 * an authority that names no server: an unqualified UI URI).
 */
export function qualifiedUiUri(
  uri: string,
  isServer: (name: string) => boolean,
): QualifiedUiUri | undefined {
  if (!isUiUri(uri)) return undefined;
  const slash = uri.indexOf('/', UI_URI_PREFIX.length);
  if (slash < 0) return undefined;
  const server = uri.slice(UI_URI_PREFIX.length, slash);
  if (!isServer(server)) return undefined;
  return { server, uri: `${UI_URI_PREFIX}${uri.slice(slash + 1)}` };
}

/** `_meta` with its UI URIs (`ui.resourceUri`, `ui/resourceUri`) in the broker's form. */
function metaWithBrokerUiUris(server: string, meta: unknown): unknown {
  if (!isPlainObject(meta)) return meta;
  let copy: Record<string, unknown> | undefined;
  const ui = meta[UI_META_KEY];
  if (isPlainObject(ui) && isUiUri(ui.resourceUri)) {
    copy = { ...meta, [UI_META_KEY]: { ...ui, resourceUri: brokerUiUri(server, ui.resourceUri) } };
  }
  const flat = meta[FLAT_RESOURCE_URI_META_KEY];
  if (isUiUri(flat)) {
    copy = { ...(copy ?? meta), [FLAT_RESOURCE_URI_META_KEY]: brokerUiUri(server, flat) };
  }
  return copy ?? meta;
}

/** A copy of `item` whose `_meta` UI URIs are in the broker's form (`item` when none). */
function withBrokerMeta<T extends Record<string, unknown>>(server: string, item: T): T {
  if (!('_meta' in item)) return item;
  const meta = metaWithBrokerUiUris(server, item._meta);
  return meta === item._meta ? item : { ...item, _meta: meta };
}

/** A backend's tool (a `tools/list` item) as clients see it: its UI linkage in broker form. */
export function toolWithBrokerUiUris(
  server: string,
  tool: Record<string, unknown>,
): Record<string, unknown> {
  return withBrokerMeta(server, tool);
}

/** The UI resource a tool (as clients see it) renders: its `_meta.ui.resourceUri`, if any. */
export function toolUiResourceUri(tool: Record<string, unknown>): string | undefined {
  const meta = tool._meta;
  if (!isPlainObject(meta)) return undefined;
  const ui = meta[UI_META_KEY];
  if (isPlainObject(ui) && isUiUri(ui.resourceUri)) return ui.resourceUri;
  const flat = meta[FLAT_RESOURCE_URI_META_KEY];
  return isUiUri(flat) ? flat : undefined;
}

/**
 * A tool without its UI linkage (`_meta.ui.resourceUri` and `_meta["ui/resourceUri"]` removed,
 * the rest of `_meta.ui`, e.g. `visibility`, kept): for a person who may not read its UI, whose
 * host then shows the tool's text result instead of failing to render.
 */
export function toolWithoutUiLink(tool: Record<string, unknown>): Record<string, unknown> {
  const meta = tool._meta;
  if (!isPlainObject(meta)) return tool;
  const { [FLAT_RESOURCE_URI_META_KEY]: _flat, ...rest } = meta;
  const ui = rest[UI_META_KEY];
  if (isPlainObject(ui)) {
    const { resourceUri: _link, ...uiRest } = ui;
    rest[UI_META_KEY] = uiRest;
  }
  return { ...tool, _meta: rest };
}

/** A content block (tool result, prompt message) with its resource URI in broker form. */
function contentWithBrokerUiUri(server: string, block: unknown): unknown {
  if (!isPlainObject(block)) return block;
  if (block.type === 'resource_link' && isUiUri(block.uri)) {
    return { ...block, uri: brokerUiUri(server, block.uri) };
  }
  if (block.type === 'resource' && isPlainObject(block.resource) && isUiUri(block.resource.uri)) {
    return {
      ...block,
      resource: { ...block.resource, uri: brokerUiUri(server, block.resource.uri) },
    };
  }
  return block;
}

/** `items` with `rewrite` applied to each; the same array when nothing changed. */
function mapChanged(items: unknown, rewrite: (item: unknown) => unknown): unknown {
  if (!Array.isArray(items)) return items;
  const mapped = items.map(rewrite);
  return mapped.some((item, index) => item !== items[index]) ? mapped : items;
}

/**
 * A backend's result (`tools/call`, `resources/read`, `prompts/get`, a task's result) with every
 * UI URI of the fields listed in the file comment in the broker's form; `result` itself when
 * it holds none.
 */
export function resultWithBrokerUiUris(
  server: string,
  result: Record<string, unknown>,
): Record<string, unknown> {
  let copy = withBrokerMeta(server, result);
  const replace = (key: string, value: unknown) => {
    if (value !== copy[key]) copy = { ...copy, [key]: value };
  };
  replace(
    'content',
    mapChanged(copy.content, block => contentWithBrokerUiUri(server, block)),
  );
  replace(
    'contents',
    mapChanged(copy.contents, item =>
      isPlainObject(item) && isUiUri(item.uri)
        ? { ...item, uri: brokerUiUri(server, item.uri) }
        : item,
    ),
  );
  replace(
    'messages',
    mapChanged(copy.messages, message => {
      if (!isPlainObject(message)) return message;
      const content = contentWithBrokerUiUri(server, message.content);
      return content === message.content ? message : { ...message, content };
    }),
  );
  return copy;
}
