/*
 * Development sign-in: a person picks a fixture user (from `app.devSignIn.users`) or types any
 * catalog user's name, and the app signs in through the backend's oauth2-proxy provider with that
 * name in `X-Forwarded-User` — what the development backend trusts (app-config.yaml) and a
 * production backend behind a real oauth2-proxy never would. The choice is kept per browser tab
 * (sessionStorage) so a reload stays signed in; signing out forgets it.
 *
 * Only development builds contain this page (see ./index.ts).
 */
import { ProxiedSignInPage } from '@backstage/core-components';
import { configApiRef, useApi, type IdentityApi } from '@backstage/frontend-plugin-api';
import type { SignInPageProps } from '@backstage/plugin-app-react';
import {
  Alert,
  Button,
  Card,
  CardBody,
  CardHeader,
  Container,
  Flex,
  Text,
  TextField,
} from '@backstage/ui';
import { useState } from 'react';

/** The sessionStorage key of the chosen user name. */
export const DEV_USER_STORAGE_KEY = 'devportal.devSignIn.user';

interface DevUser {
  name: string;
  description?: string;
}

/** The identity, forgetting the chosen user when the person signs out. */
function forgettingOnSignOut(identity: IdentityApi): IdentityApi {
  return {
    getProfileInfo: () => identity.getProfileInfo(),
    getBackstageIdentity: () => identity.getBackstageIdentity(),
    getCredentials: () => identity.getCredentials(),
    signOut: async () => {
      sessionStorage.removeItem(DEV_USER_STORAGE_KEY);
      await identity.signOut();
    },
  };
}

/** The development sign-in page. */
export function DevSignInPage(props: SignInPageProps) {
  const config = useApi(configApiRef);
  const users: DevUser[] =
    config.getOptionalConfigArray('app.devSignIn.users')?.map(user => ({
      name: user.getString('name'),
      description: user.getOptionalString('description'),
    })) ?? [];
  const [chosen, setChosen] = useState(
    () => sessionStorage.getItem(DEV_USER_STORAGE_KEY) ?? undefined,
  );
  const [other, setOther] = useState('');

  const choose = (name: string) => {
    sessionStorage.setItem(DEV_USER_STORAGE_KEY, name);
    setChosen(name);
  };
  const forget = () => {
    sessionStorage.removeItem(DEV_USER_STORAGE_KEY);
    setChosen(undefined);
  };

  if (chosen !== undefined) {
    return (
      <ProxiedSignInPage
        provider="oauth2Proxy"
        headers={{ 'X-Forwarded-User': chosen }}
        onSignInSuccess={identity => props.onSignInSuccess(forgettingOnSignOut(identity))}
        ErrorComponent={({ error }) => (
          <Container py="8">
            <Flex direction="column" gap="3" align="start">
              <Alert
                role="alert"
                status="danger"
                icon
                title={`Could not sign in as ${chosen}`}
                description={`${
                  error?.message ?? 'Unknown error'
                }. Is the backend running, and is ${chosen} a user in its catalog?`}
              />
              <Button variant="secondary" onPress={forget}>
                Choose another user
              </Button>
            </Flex>
          </Container>
        )}
      />
    );
  }
  return (
    <Container py="8">
      <main>
        <Flex direction="column" gap="4">
          <Text as="h1" variant="title-large" weight="bold">
            Sign in (development)
          </Text>
          <Text>
            This development app signs you in as any user of the catalog, through the backend&apos;s
            oauth2-proxy provider. A production build has no such page.
          </Text>
          <Card>
            <CardHeader>
              <Text as="h2" variant="title-small" weight="bold">
                Fixture users
              </Text>
            </CardHeader>
            <CardBody>
              <ul aria-label="Fixture users" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
                {users.map(user => (
                  <li key={user.name} style={{ marginBottom: 8 }}>
                    <Flex gap="3" align="center">
                      <Button variant="primary" onPress={() => choose(user.name)}>
                        Sign in as {user.name}
                      </Button>
                      {user.description !== undefined && (
                        <Text color="secondary">{user.description}</Text>
                      )}
                    </Flex>
                  </li>
                ))}
              </ul>
            </CardBody>
          </Card>
          <form
            onSubmit={event => {
              event.preventDefault();
              if (other.trim() !== '') choose(other.trim());
            }}
          >
            <Flex gap="3" align="end">
              <TextField label="Another catalog user" value={other} onChange={setOther} />
              <Button type="submit" variant="secondary" isDisabled={other.trim() === ''}>
                Sign in
              </Button>
            </Flex>
          </form>
        </Flex>
      </main>
    </Container>
  );
}
