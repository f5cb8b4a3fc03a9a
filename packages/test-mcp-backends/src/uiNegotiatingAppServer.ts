/*
 * A small MCP Apps server (SDK 1.x, 2025-11-25 sessions) that does what ext-apps asks of a
 * server and the official example servers do not: it registers its UI tools only for a client
 * that declared `io.modelcontextprotocol/ui` (ext-apps' `getUiCapability` check, made once the
 * session is initialized), and it has an app-only tool (`_meta.ui.visibility: ["app"]`). For
 * the broker's tests of UI negotiation and visibility (docs/contracts/tasks-and-apps.md
 * §3.4–§3.5):
 * - `show-board` renders `ui://board/view.html` (UI clients only);
 * - `refresh-board` may be called by the app only (UI clients only); its second content block
 *   is the call's `_meta` as JSON text (`null` without one): what reached the server;
 * - `link-board` answers with a `resource_link` to its UI (every client);
 * - `ui-capability` answers, as JSON text, the `io.modelcontextprotocol/ui` declaration of the
 *   session that called it (`null` without one): what the broker relayed for that caller;
 * - the resource template `ui://board-views/{view}` (a view per period) completes its `view`
 *   argument (`completion/complete`) from `daily`, `weekly` and `monthly`.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { legacySessions, listenLegacySessions } from './legacySessions';

const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui';
/** The server's UI resource, as it knows it. */
export const BOARD_UI_URI = 'ui://board/view.html';
/** The server's resource template of UI views, as it knows it; its `view` completes. */
export const BOARD_VIEWS_TEMPLATE = 'ui://board-views/{view}';
/** The views {@link BOARD_VIEWS_TEMPLATE} offers. */
const BOARD_VIEWS = ['daily', 'weekly', 'monthly'];
/** The HTML its UI resource serves. */
export const BOARD_UI_HTML = '<!doctype html><title>Board</title><p>board app</p>';

/** A running UI-negotiating app server. */
export interface UiNegotiatingAppServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the server on a free loopback port. */
export async function startUiNegotiatingAppServer(): Promise<UiNegotiatingAppServer> {
  const newServer = () => {
    const server = new McpServer(
      { name: 'ui-negotiating-app', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true }, resources: {} } },
    );
    const declaredUi = () => server.server.getClientCapabilities()?.extensions?.[UI_EXTENSION_ID];
    const uiTools = [
      server.registerTool(
        'show-board',
        {
          description: 'Shows the board',
          _meta: { ui: { resourceUri: BOARD_UI_URI }, 'ui/resourceUri': BOARD_UI_URI },
        },
        async () => ({ content: [{ type: 'text', text: 'board shown' }] }),
      ),
      server.registerTool(
        'refresh-board',
        {
          description: 'Refreshes the board (called by the app)',
          _meta: { ui: { resourceUri: BOARD_UI_URI, visibility: ['app'] } },
        },
        async (extra: { _meta?: Record<string, unknown> }) => ({
          content: [
            { type: 'text', text: 'board refreshed' },
            { type: 'text', text: JSON.stringify(extra._meta ?? null) },
          ],
        }),
      ),
    ];
    for (const tool of uiTools) tool.disable();
    // Only known once the client's initialize has been read.
    server.server.oninitialized = () => {
      if (declaredUi() !== undefined) for (const tool of uiTools) tool.enable();
    };
    server.registerTool('link-board', { description: 'Links to the board' }, async () => ({
      content: [{ type: 'resource_link', uri: BOARD_UI_URI, name: 'board' }],
    }));
    server.registerTool(
      'ui-capability',
      { description: 'What the calling session declared of io.modelcontextprotocol/ui' },
      async () => ({ content: [{ type: 'text', text: JSON.stringify(declaredUi() ?? null) }] }),
    );
    server.registerResource(
      'board',
      BOARD_UI_URI,
      { mimeType: 'text/html;profile=mcp-app' },
      async () => ({
        contents: [
          { uri: BOARD_UI_URI, mimeType: 'text/html;profile=mcp-app', text: BOARD_UI_HTML },
        ],
      }),
    );
    server.registerResource(
      'board-views',
      new ResourceTemplate(BOARD_VIEWS_TEMPLATE, {
        list: undefined,
        complete: { view: value => BOARD_VIEWS.filter(view => view.startsWith(value)) },
      }),
      { mimeType: 'text/html;profile=mcp-app' },
      async (uri, { view }) => ({
        contents: [
          {
            uri: uri.href,
            mimeType: 'text/html;profile=mcp-app',
            text: `<!doctype html><title>Board: ${String(view)}</title>`,
          },
        ],
      }),
    );
    return { server };
  };
  return listenLegacySessions(legacySessions(newServer));
}
