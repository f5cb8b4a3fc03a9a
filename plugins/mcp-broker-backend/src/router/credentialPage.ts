/*
 * The broker's page for storing a personal credential (spec §11): where a URL-mode elicitation
 * sends a person. Server-rendered HTML with every variable escaped; the form is sent by a small
 * same-origin script (credentialPageScript.ts, no inline script: Backstage's CSP stays as is) as
 * JSON to the REST endpoint, so a cross-site form cannot submit it. The page never shows a stored
 * value — only whether one is stored and since when.
 */
import type { CredentialPageModel } from '../identity/CredentialSelfService';

/** Where the page's links and requests go (absolute paths on the broker). */
export interface CredentialPagePaths {
  /** `/api/mcp-broker/credentials/<server>`. */
  credential: string;
  /** `/api/mcp-broker/connect/page.js`. */
  script: string;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, c => HTML_ESCAPES[c]);

const STYLE = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;font-weight:600;margin:1rem 0 .25rem}input[type=password]{width:100%;padding:.5rem;font:inherit}
button{margin-top:1rem;padding:.5rem 1rem;font:inherit}.note{color:#555}.warn{color:#a40}.ok{color:#070}`;

function layout(title: string, body: string, scriptPath?: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style>${
    scriptPath === undefined ? '' : `<script src="${escapeHtml(scriptPath)}" defer></script>`
  }</head><body>${body}</body></html>`;
}

/** The page for a signed-in person. */
export function renderCredentialPage(
  model: CredentialPageModel,
  who: string,
  paths: CredentialPagePaths,
  elicitationId: string | undefined,
): string {
  const server = escapeHtml(model.server);
  const notes: string[] = [];
  if (model.elicitation === 'for-someone-else') {
    notes.push(
      '<p class="warn">This link was made for another person. Storing a credential here stores it for you, not for them; open the link your own MCP client shows you.</p>',
    );
  } else if (model.elicitation === 'expired-or-unknown') {
    notes.push(
      '<p class="warn">This link has expired or was already used. You can still store your credential; then call the tool again.</p>',
    );
  }
  const stored = model.stored
    ? `<p>You stored a credential for ${server} on ${escapeHtml(model.stored.updatedAt)}. Storing a new one replaces it.</p>
<button type="button" id="delete">Delete my credential for ${server}</button>`
    : `<p>You have no credential stored for ${server} yet.</p>`;
  const answering = model.elicitation === 'open' && elicitationId !== undefined;
  return layout(
    `Your credential for ${model.server}`,
    `<h1>Your credential for ${server}</h1>
<p class="note">Signed in as ${escapeHtml(who)}. The MCP server <strong>${server}</strong> acts with your own account: the MCP broker presents this credential on your calls to it, and only on yours. It is stored encrypted and nobody can read it back, not even you; you can replace or delete it here.</p>
${model.description === undefined ? '' : `<p>${escapeHtml(model.description)}</p>`}
${notes.join('\n')}
${stored}
<form id="store" data-credential="${escapeHtml(paths.credential)}"${
      answering ? ` data-elicitation="${escapeHtml(elicitationId)}"` : ''
    }>
<label for="value">Credential</label>
<input type="password" id="value" name="value" autocomplete="off" required>
<button type="submit">Store</button>
</form>
<p id="result" role="status"></p>`,
    paths.script,
  );
}

/** The page for a person who is not signed in (no Backstage sign-in cookie on this host). */
export function renderSignInPage(server: string, appUrl: string | undefined): string {
  const link =
    appUrl === undefined
      ? 'Backstage'
      : `<a href="${escapeHtml(appUrl)}" target="_blank" rel="noopener">Backstage</a>`;
  return layout(
    'Sign in to store your credential',
    `<h1>Sign in first</h1>
<p>To store your credential for <strong>${escapeHtml(server)}</strong>, this page must know who you are. Sign in to ${link} in this browser, then reload this page.</p>
<p class="note">The page recognises you by Backstage's sign-in cookie for this host, which the Backstage app sets when you sign in there. Credentials are stored only from this page (or the app), never with a token.</p>`,
  );
}
