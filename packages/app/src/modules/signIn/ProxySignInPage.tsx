/* Production sign-in: the user the oauth2-proxy in front of Backstage has authenticated. */
import { ProxiedSignInPage } from '@backstage/core-components';
import type { SignInPageProps } from '@backstage/plugin-app-react';

/** Signs in through the backend's oauth2-proxy provider, without any choice. */
export function ProxySignInPage(props: SignInPageProps) {
  return <ProxiedSignInPage {...props} provider="oauth2Proxy" />;
}
