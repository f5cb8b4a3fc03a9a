/*
 * The app's sign-in page. A production build signs in through the oauth2-proxy provider only,
 * with the user the real proxy in front of Backstage names (ProxySignInPage). A development build
 * (`yarn start`, and tests) offers the fixture users instead (DevSignInPage). The choice is made
 * when the bundle is built: in a production build `process.env.NODE_ENV` is the constant
 * "production", the bundler drops the other branch, and the development page is not in the
 * bundle at all — no configuration can turn it on there.
 */
import { createFrontendModule } from '@backstage/frontend-plugin-api';
import { SignInPageBlueprint, type SignInPageProps } from '@backstage/plugin-app-react';
import type { ComponentType } from 'react';

/** Loads this build's sign-in page. */
export const loadSignInPage: () => Promise<ComponentType<SignInPageProps>> =
  process.env.NODE_ENV === 'production'
    ? async () => (await import('./ProxySignInPage')).ProxySignInPage
    : async () => (await import('./DevSignInPage')).DevSignInPage;

/** The app's sign-in page. */
export const signInModule = createFrontendModule({
  pluginId: 'app',
  extensions: [SignInPageBlueprint.make({ params: { loader: loadSignInPage } })],
});
