/* mcpBroker.credentialProfiles: every mode through parseServerAuth, grants, and errors naming the key. */
import { ConfigReader } from '@backstage/config';
import { readCredentialProfiles } from './credentialProfiles';

const read = (profiles: unknown) =>
  readCredentialProfiles(new ConfigReader({ credentialProfiles: profiles } as any));
const exchange = {
  mode: 'tokenExchange',
  tokenEndpoint: 'https://sso.example.com/token',
  clientId: 'mcp-broker',
};

describe('readCredentialProfiles', () => {
  it('reads each mode with its namespaces and URL patterns', () => {
    const profiles = read({
      sso: { ...exchange, clientSecret: 's3cret', namespaces: ['team-a'], audience: 'tools' },
      actions: { mode: 'backstage', targetPluginId: 'mcp-actions', namespaces: ['team-a'] },
      keys: {
        mode: 'userCredential',
        header: 'X-Api-Key',
        namespaces: ['team-a', 'team-b'],
        urls: ['https://*.example.com/mcp'],
      },
    });
    expect(profiles.get('sso')).toMatchObject({
      name: 'sso',
      namespaces: new Set(['team-a']),
      auth: {
        ...exchange,
        clientSecret: 's3cret',
        audience: 'tools',
        clientAuthentication: 'client_secret_basic',
        subjectTokenAudience: exchange.tokenEndpoint,
      },
    });
    expect(profiles.get('sso')!.urls).toBeUndefined();
    expect(profiles.get('actions')!.auth).toEqual({
      mode: 'backstage',
      targetPluginId: 'mcp-actions',
    });
    expect(profiles.get('keys')!.auth).toEqual({
      mode: 'userCredential',
      header: 'X-Api-Key',
      prefix: '',
    });
    expect(profiles.get('keys')!.urls!.map(u => u.source)).toEqual(['https://*.example.com/mcp']);
    expect(readCredentialProfiles(new ConfigReader({})).size).toBe(0);
  });

  it('takes a token exchange client secret from a Secret the admin names instead', () => {
    const profile = read({
      sso: {
        ...exchange,
        namespaces: ['team-a'],
        clientSecretRef: { namespace: 'platform', name: 'broker-sso' },
      },
    }).get('sso')!;
    expect(profile.clientSecretRef).toEqual({
      namespace: 'platform',
      name: 'broker-sso',
      key: 'clientSecret',
    });
    expect(profile.auth).not.toHaveProperty('clientSecret');
  });

  it.each([
    [
      { Bad_Name: { ...exchange, namespaces: ['a'] } },
      /credentialProfiles\.Bad_Name: a profile name/,
    ],
    [
      { p: { mode: 'backstage', targetPluginId: 'x' } },
      /credentialProfiles\.p\.namespaces: required/,
    ],
    [{ p: { mode: 'backstage', targetPluginId: 'x', namespaces: [] } }, /p\.namespaces: required/],
    [
      { p: { mode: 'backstage', targetPluginId: 'x', namespaces: ['Team_A'] } },
      /p\.namespaces\[0\] "Team_A": not a namespace name/,
    ],
    [
      { p: { mode: 'backstage', targetPluginId: 'x', namespaces: ['a'], urls: ['nope'] } },
      /credentialProfiles\.p\.urls\[0\] "nope"/,
    ],
    [
      { p: { mode: 'broker', namespaces: ['a'] } },
      /credentialProfiles\.p\.mode: a profile names a personal mode/,
    ],
    [{ p: { namespaces: ['a'] } }, /credentialProfiles\.p\.mode/],
    [
      { p: { mode: 'passthrough', namespaces: ['a'] } },
      /credentialProfiles\.p\.mode: mode must be one of/,
    ],
    [
      { p: { mode: 'backstage', namespaces: ['a'] } },
      /credentialProfiles\.p\.targetPluginId: targetPluginId is required/,
    ],
    [
      { p: { ...exchange, namespaces: ['a'] } },
      /credentialProfiles\.p\.clientSecret: clientSecret is required/,
    ],
    [
      {
        p: {
          ...exchange,
          namespaces: ['a'],
          clientSecret: 's3cret',
          clientSecretRef: { namespace: 'x', name: 'y' },
        },
      },
      /credentialProfiles\.p: set clientSecret or clientSecretRef, not both/,
    ],
    [
      { p: { ...exchange, namespaces: ['a'], clientSecretRef: { name: 'y' } } },
      /credentialProfiles\.p\.clientSecretRef\.namespace: required/,
    ],
    [
      {
        p: {
          mode: 'backstage',
          targetPluginId: 'x',
          namespaces: ['a'],
          clientSecretRef: { namespace: 'x', name: 'y' },
        },
      },
      /p\.clientSecretRef: only a tokenExchange profile has one/,
    ],
  ])('refuses %j naming the key, never a secret', (profiles, message) => {
    let error: unknown;
    try {
      read(profiles);
    } catch (thrown) {
      error = thrown;
    }
    expect((error as Error)?.message).toMatch(message);
    expect((error as Error).message).not.toContain('s3cret');
  });
});
