/*
 * MCPServerRegistration → server entry, with in-memory lookups (no API server needed for the
 * mapping rules): route, prefix, Secret, and the credential a registration may ask for — only a
 * profile of the admin's (spec §11.1), parsed from real config by readCredentialProfiles.
 */
import { ConfigReader } from '@backstage/config';
import { readCredentialProfiles } from '../identity/credentialProfiles';
import { CREDENTIAL_PROFILE_ANNOTATION } from './registrationAuth';
import { derivedNameOf } from './derivedNameOf';
import { resolveRegistration, SERVER_URL_ANNOTATION } from './registrationMapping';
import { RegistrationError, type KubeObjectLike } from './registrationTypes';

const secretValue = 'top-secret-value';
const profiles = readCredentialProfiles(
  new ConfigReader({
    credentialProfiles: {
      'company-sso': {
        namespaces: ['team-a'],
        urls: ['https://*.tools.example.com/mcp'],
        mode: 'tokenExchange',
        tokenEndpoint: 'https://sso.example.com/token',
        clientId: 'mcp-broker',
        clientSecret: secretValue,
        audience: 'tools',
      },
      'sso-from-secret': {
        namespaces: ['team-a'],
        mode: 'tokenExchange',
        tokenEndpoint: 'https://sso.example.com/token',
        clientId: 'mcp-broker',
        clientSecretRef: { namespace: 'platform', name: 'broker-sso' },
      },
      actions: { namespaces: ['team-a'], mode: 'backstage', targetPluginId: 'mcp-actions' },
      'actions-elsewhere': {
        namespaces: ['team-a'],
        urls: ['https://actions-front.example.com/**'],
        mode: 'backstage',
        targetPluginId: 'mcp-actions',
      },
      'github-keys': { namespaces: ['team-b'], mode: 'userCredential', header: 'X-Api-Key' },
    },
  }),
);
const context = (
  objects: Record<string, KubeObjectLike>,
  routes: { scheme: 'http' | 'https'; port?: number } = { scheme: 'https' },
) => ({
  lookups: {
    httpRoute: async (ns: string, name: string) => objects[`route:${ns}/${name}`],
    secret: async (ns: string, name: string) => objects[`secret:${ns}/${name}`],
  },
  routes,
  profiles,
  pluginBaseUrls: async (pluginId: string) => [
    `http://localhost:7007/api/${pluginId}`,
    `https://backstage.example.com/api/${pluginId}`,
  ],
});
const lookups = context;
const registration = (spec: object, annotations?: Record<string, string>): KubeObjectLike => ({
  metadata: { namespace: 'team-a', name: 'Weather.v2', annotations },
  spec,
});
const route = { spec: { hostnames: ['weather.example.com'] } };

describe('resolveRegistration', () => {
  it('derives a [a-z0-9-] name, the default prefix and /mcp from the HTTPRoute hostname', async () => {
    expect(derivedNameOf('team-a', 'Weather.v2')).toBe('team-a-weather-v2');
    const server = await resolveRegistration(
      registration({ targetRef: { name: 'r' } }),
      lookups({ 'route:team-a/r': route }),
    );
    expect(server).toEqual({
      name: 'team-a-weather-v2',
      url: 'https://weather.example.com/mcp',
      toolPrefix: 'team-a-weather-v2_',
      headers: {},
      source: { type: 'kubernetes', namespace: 'team-a', name: 'Weather.v2' },
    });
  });

  it('follows a targetRef into another namespace and uses spec.path and the configured port', async () => {
    const server = await resolveRegistration(
      registration({ targetRef: { name: 'r', namespace: 'gw' }, path: '/v1/mcp' }),
      context({ 'route:gw/r': route }, { scheme: 'http', port: 8080 }),
    );
    expect(server.url).toBe('http://weather.example.com:8080/v1/mcp');
  });

  it('prefers the explicit URL annotation', async () => {
    const server = await resolveRegistration(
      registration(
        { targetRef: { name: 'missing' } },
        { [SERVER_URL_ANNOTATION]: 'http://10.0.0.1:3000/mcp' },
      ),
      lookups({}),
    );
    expect(server.url).toBe('http://10.0.0.1:3000/mcp');
  });

  it('sends the Secret value as a bearer token, or as is when it carries a scheme', async () => {
    const withSecret = (value: string, key?: string) =>
      resolveRegistration(
        registration({ targetRef: { name: 'r' }, credentialRef: { name: 'cred', key } }),
        lookups({
          'route:team-a/r': route,
          'secret:team-a/cred': {
            data: { [key ?? 'token']: Buffer.from(value).toString('base64') },
          },
        }),
      );
    expect((await withSecret(secretValue)).headers).toEqual({
      Authorization: `Bearer ${secretValue}`,
    });
    expect((await withSecret(`Basic ${secretValue}`, 'auth')).headers).toEqual({
      Authorization: `Basic ${secretValue}`,
    });
  });

  it.each([
    [
      'a missing HTTPRoute',
      registration({ targetRef: { name: 'r' } }),
      {},
      /HTTPRoute team-a\/r not found/,
    ],
    [
      'a wildcard hostname',
      registration({ targetRef: { name: 'r' } }),
      { 'route:team-a/r': { spec: { hostnames: ['*.example.com'] } } },
      /no usable/,
    ],
    [
      'a target that is not an HTTPRoute',
      registration({ targetRef: { name: 'r', kind: 'Service' } }),
      {},
      /must be a gateway.networking.k8s.io HTTPRoute/,
    ],
    [
      'a bad tool prefix',
      registration({ targetRef: { name: 'r' }, toolPrefix: 'a b' }),
      { 'route:team-a/r': route },
      /toolPrefix/,
    ],
    [
      'a missing Secret',
      registration({ targetRef: { name: 'r' }, credentialRef: { name: 'cred' } }),
      { 'route:team-a/r': route },
      /Secret team-a\/cred not found/,
    ],
    [
      'a Secret without the key (the message names the key, never a value)',
      registration({ targetRef: { name: 'r' }, credentialRef: { name: 'cred', key: 'pat' } }),
      {
        'route:team-a/r': route,
        'secret:team-a/cred': { data: { token: Buffer.from(secretValue).toString('base64') } },
      },
      /Secret team-a\/cred has no key "pat"/,
    ],
  ])(
    'refuses %s with a RegistrationError saying what to fix',
    async (_what, reg, objects, message) => {
      const error = await resolveRegistration(
        reg,
        lookups(objects as Record<string, KubeObjectLike>),
      ).catch(e => e);
      expect(error).toBeInstanceOf(RegistrationError);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(secretValue);
    },
  );

  it('refuses a registration that spells out spec.auth, whatever it asks for', async () => {
    for (const auth of [
      { mode: 'backstage', targetPluginId: 'catalog' },
      {
        mode: 'tokenExchange',
        tokenEndpoint: 'https://evil.example.com/token',
        clientId: 'mcp-broker',
        clientSecretRef: { name: 'mine' },
        subjectTokenAudience: 'https://sso.example.com/token',
      },
      { mode: 'broker' },
      {},
    ]) {
      const error = await resolveRegistration(
        registration(
          { targetRef: { name: 'r' }, auth },
          { [SERVER_URL_ANNOTATION]: 'https://evil.example.com/mcp' },
        ),
        lookups({}),
      ).catch(e => e);
      expect(error).toBeInstanceOf(RegistrationError);
      expect(error.reason).toBe('AuthNotAllowed');
      expect(error.message).toMatch(/spec\.auth is not accepted: .*name a credential profile/);
    }
  });

  it('uses the admin’s profile a registration names, in spec or in the annotation', async () => {
    const url = { [SERVER_URL_ANNOTATION]: 'https://search.tools.example.com/mcp' };
    const fromSpec = await resolveRegistration(
      registration({ targetRef: { name: 'r' }, credentialProfile: 'company-sso' }, url),
      lookups({}),
    );
    expect(fromSpec.auth).toEqual({
      mode: 'tokenExchange',
      tokenEndpoint: 'https://sso.example.com/token',
      clientId: 'mcp-broker',
      clientSecret: secretValue,
      clientAuthentication: 'client_secret_basic',
      audience: 'tools',
      subjectTokenAudience: 'https://sso.example.com/token',
    });
    expect(fromSpec.source).toEqual({
      type: 'kubernetes',
      namespace: 'team-a',
      name: 'Weather.v2',
      credentialProfile: 'company-sso',
    });
    const fromAnnotation = await resolveRegistration(
      registration(
        { targetRef: { name: 'r' } },
        { ...url, [CREDENTIAL_PROFILE_ANNOTATION]: 'company-sso' },
      ),
      lookups({}),
    );
    expect(fromAnnotation).toEqual(fromSpec);
  });

  it('reads a profile’s client secret from the Secret the admin names, not from the registration’s namespace', async () => {
    const reg = registration(
      { targetRef: { name: 'r' }, credentialProfile: 'sso-from-secret' },
      { [SERVER_URL_ANNOTATION]: 'https://anything.example.com/mcp' },
    );
    const secret = { data: { clientSecret: Buffer.from(secretValue).toString('base64') } };
    const server = await resolveRegistration(
      reg,
      lookups({ 'secret:platform/broker-sso': secret }),
    );
    expect(server.auth).toMatchObject({ mode: 'tokenExchange', clientSecret: secretValue });
    const error = await resolveRegistration(
      reg,
      lookups({ 'secret:team-a/broker-sso': secret }),
    ).catch(e => e);
    expect(error).toBeInstanceOf(RegistrationError);
    expect(error.reason).toBe('ProfileUnavailable');
    expect(error.message).toContain('Secret platform/broker-sso not found');
  });

  it('sends backstage tokens only to the target plugin’s own URL, or one the profile allows', async () => {
    const withUrl = (profile: string, url: string) =>
      resolveRegistration(
        registration(
          { targetRef: { name: 'r' }, credentialProfile: profile },
          { [SERVER_URL_ANNOTATION]: url },
        ),
        lookups({}),
      );
    for (const url of [
      'http://localhost:7007/api/mcp-actions/v1',
      'https://backstage.example.com/api/mcp-actions/v1',
    ]) {
      expect((await withUrl('actions', url)).auth).toEqual({
        mode: 'backstage',
        targetPluginId: 'mcp-actions',
      });
    }
    expect(
      (await withUrl('actions-elsewhere', 'https://actions-front.example.com/api/mcp-actions/v1'))
        .auth,
    ).toEqual({ mode: 'backstage', targetPluginId: 'mcp-actions' });
    for (const [profile, url] of [
      ['actions', 'https://evil.example.com/api/mcp-actions/v1'],
      ['actions', 'http://localhost:7007/api/mcp-actions-evil/v1'],
      ['actions', 'http://localhost:7008/api/mcp-actions/v1'],
      // urls replace the discovery rule: the plugin's own URL is then one more URL to list.
      ['actions-elsewhere', 'http://localhost:7007/api/mcp-actions/v1'],
    ]) {
      const error = await withUrl(profile, url).catch(e => e);
      expect(error).toBeInstanceOf(RegistrationError);
      expect(error.reason).toBe('UrlNotAllowed');
      expect(error.message).toContain(url);
    }
  });

  it.each([
    [
      'an unknown profile',
      { targetRef: { name: 'r' }, credentialProfile: 'no-such' },
      'https://search.tools.example.com/mcp',
      'ProfileNotFound',
      /credential profile "no-such" does not exist/,
    ],
    [
      'a profile its namespace may not use',
      { targetRef: { name: 'r' }, credentialProfile: 'github-keys' },
      'https://search.tools.example.com/mcp',
      'ProfileNotAllowed',
      /"github-keys" may not be used from namespace team-a/,
    ],
    [
      'a URL the profile does not allow',
      { targetRef: { name: 'r' }, credentialProfile: 'company-sso' },
      'https://evil.example.com/mcp',
      'UrlNotAllowed',
      /https:\/\/evil\.example\.com\/mcp is not one credential profile "company-sso" allows \(https:\/\/\*\.tools\.example\.com\/mcp\)/,
    ],
    [
      'a URL with user information',
      { targetRef: { name: 'r' }, credentialProfile: 'company-sso' },
      `https://me:${secretValue}@search.tools.example.com/mcp`,
      'Invalid',
      /a URL with user information/,
    ],
    [
      'a profile name that is not a string',
      { targetRef: { name: 'r' }, credentialProfile: { name: 'company-sso' } },
      'https://search.tools.example.com/mcp',
      'Invalid',
      /spec\.credentialProfile must be the name of a credential profile/,
    ],
  ])('refuses %s, with its reason', async (_what, spec, url, reason, message) => {
    const error = await resolveRegistration(
      registration(spec, { [SERVER_URL_ANNOTATION]: url }),
      lookups({}),
    ).catch(e => e);
    expect(error).toBeInstanceOf(RegistrationError);
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain(secretValue);
  });

  it('refuses a spec field and an annotation that name different profiles', async () => {
    const error = await resolveRegistration(
      registration(
        { targetRef: { name: 'r' }, credentialProfile: 'company-sso' },
        {
          [SERVER_URL_ANNOTATION]: 'https://search.tools.example.com/mcp',
          [CREDENTIAL_PROFILE_ANNOTATION]: 'actions',
        },
      ),
      lookups({}),
    ).catch(e => e);
    expect(error.message).toMatch(/disagree: keep one/);
  });
});
