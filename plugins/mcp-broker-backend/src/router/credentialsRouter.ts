/*
 * The identity endpoints of the broker (spec §11), under /api/mcp-broker (the credentials' routes
 * are entries of `brokerOperations`; the JWKS and the page are documents, not REST):
 *   GET    /.well-known/jwks.json        the key set of the broker's token-exchange subject tokens
 *   GET    /credentials                   the caller's personal credentials (names and dates)
 *   PUT    /credentials/:server           store or replace theirs: JSON { value, elicitationId? }
 *   DELETE /credentials/:server           delete theirs
 *   GET    /connect/:server               the page a URL-mode elicitation points at (HTML)
 *   GET    /connect/page.js               that page's script
 * `GET /credentials` accepts a Backstage token or the Backstage sign-in cookie; writes (PUT,
 * DELETE) only the person's own browser (CredentialWriteGuard: cookie and the backend's or the
 * app's `Origin`; bearer tokens refused). Parse → call CredentialSelfService → respond; errors
 * are @backstage/errors bodies.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import express, { type Request } from 'express';
import Router from 'express-promise-router';
import type { CredentialSelfService } from '../identity/CredentialSelfService';
import { JWKS_MAX_AGE_S, type SubjectTokenIssuer } from '../identity/SubjectTokenIssuer';
import { isValidServerName } from '../config';
import { principalString } from './VerifiedPrincipalCache';
import { renderCredentialPage, renderSignInPage } from './credentialPage';
import { CREDENTIAL_PAGE_SCRIPT } from './credentialPageScript';
import { CredentialWriteGuard, type CredentialWritePolicy } from './CredentialWriteGuard';
import { bindBrokerOperation } from './bindBrokerOperation';

/** Paths the plugin declares to Backstage's auth barrier (see plugin.ts). */
export const IDENTITY_AUTH_POLICIES = [
  { path: '/.well-known/jwks.json', allow: 'unauthenticated' },
  // The page answers a friendly sign-in page itself when there is no cookie.
  { path: '/connect', allow: 'unauthenticated' },
  { path: '/credentials', allow: 'user-cookie' },
] as const;

/** Dependencies of {@link createCredentialsRouter}. */
export interface CredentialsRouterOptions {
  httpAuth: HttpAuthService;
  selfService: CredentialSelfService;
  issuer: SubjectTokenIssuer;
  /** The broker's external path prefix, e.g. `/api/mcp-broker`. */
  basePath: string;
  /** The broker's page for a server (absolute URL), named when a write is refused. */
  pageUrl(server: string): string;
  /** The Backstage app, linked from the sign-in page. */
  appUrl?: string;
  /** Who may write (CredentialWriteGuard). */
  writePolicy: CredentialWritePolicy;
}

/** A write's body must be JSON (said before the body's own problems, which assume it is). */
const requireJson: express.RequestHandler = (req, _res, next) => {
  next(
    req.is('application/json')
      ? undefined
      : new InputError(
          'Send the credential as JSON: {"value": "…"} with Content-Type application/json',
        ),
  );
};

function serverParam(req: Request): string {
  const server = req.params.server;
  if (!isValidServerName(server)) {
    throw new InputError('The server name must use lower-case letters, digits and "-"');
  }
  return server;
}

/** Builds the identity router; see the file comment. */
export function createCredentialsRouter(options: CredentialsRouterOptions): express.Router {
  const { httpAuth, selfService } = options;
  const router = Router();

  const guard = new CredentialWriteGuard(httpAuth, options.writePolicy, options.pageUrl);
  const reader = async (req: Request) =>
    principalString(
      await httpAuth.credentials(req, { allow: ['user', 'service'], allowLimitedAccess: true }),
    );

  router.get('/.well-known/jwks.json', (_req, res) => {
    // Verifiers may cache it this long: a new key is published at least that long before use.
    res.setHeader('cache-control', `public, max-age=${JWKS_MAX_AGE_S}`);
    res.json(options.issuer.jwks());
  });

  bindBrokerOperation(router, 'listCredentials', async ({ req, res }) => {
    res.setHeader('cache-control', 'no-store');
    return { items: await selfService.list(await reader(req)) };
  });

  bindBrokerOperation(
    router,
    'storeCredential',
    async ({ req, params: { server }, body }) => {
      const principal = await guard.writer(req, server);
      const dates = await selfService.store(principal, server, body.value, body.elicitationId);
      return {
        server,
        createdAt: new Date(dates.createdAt).toISOString(),
        updatedAt: new Date(dates.updatedAt).toISOString(),
      };
    },
    { before: [express.json({ limit: '16kb' }), requireJson] },
  );

  bindBrokerOperation(router, 'deleteCredential', async ({ req, params: { server } }) => {
    await selfService.remove(await guard.writer(req, server), server);
  });

  router.get('/connect/page.js', (_req, res) => {
    res.type('application/javascript').setHeader('cache-control', 'no-cache');
    res.send(CREDENTIAL_PAGE_SCRIPT);
  });

  router.get('/connect/:server', async (req, res) => {
    const server = serverParam(req);
    res.setHeader('cache-control', 'no-store');
    let credentials;
    try {
      credentials = await httpAuth.credentials(req, { allow: ['user'], allowLimitedAccess: true });
    } catch {
      res.status(401).type('html').send(renderSignInPage(server, options.appUrl));
      return;
    }
    const principal = principalString(credentials);
    const elicitationId =
      typeof req.query.elicitationId === 'string' ? req.query.elicitationId : undefined;
    const model = await selfService.page(principal, server, elicitationId);
    res.type('html').send(
      renderCredentialPage(
        model,
        principal.slice('user:'.length),
        {
          credential: `${options.basePath}/credentials/${server}`,
          script: `${options.basePath}/connect/page.js`,
        },
        elicitationId,
      ),
    );
  });

  return router;
}
