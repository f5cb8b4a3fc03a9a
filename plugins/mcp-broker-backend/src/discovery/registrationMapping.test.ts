/* MCPServerRegistration → server entry, with in-memory lookups (no API server needed for the mapping rules). */
import {
  RegistrationError,
  resolveRegistration,
  serverNameOf,
  SERVER_URL_ANNOTATION,
  type KubeObjectLike,
} from './registrationMapping';

const secretValue = 'top-secret-value';
const lookups = (objects: Record<string, KubeObjectLike>) => ({
  httpRoute: async (ns: string, name: string) => objects[`route:${ns}/${name}`],
  secret: async (ns: string, name: string) => objects[`secret:${ns}/${name}`],
});
const registration = (spec: object, annotations?: Record<string, string>): KubeObjectLike => ({
  metadata: { namespace: 'team-a', name: 'Weather.v2', annotations },
  spec,
});
const route = { spec: { hostnames: ['weather.example.com'] } };
const routes = { scheme: 'https' as const };

describe('resolveRegistration', () => {
  it('derives a [a-z0-9-] name, the default prefix and /mcp from the HTTPRoute hostname', async () => {
    expect(serverNameOf('team-a', 'Weather.v2')).toBe('team-a-weather-v2');
    const server = await resolveRegistration(
      registration({ targetRef: { name: 'r' } }),
      lookups({ 'route:team-a/r': route }),
      routes,
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
      lookups({ 'route:gw/r': route }),
      { scheme: 'http', port: 8080 },
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
      routes,
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
        routes,
      );
    expect((await withSecret(secretValue)).headers).toEqual({
      Authorization: `Bearer ${secretValue}`,
    });
    expect((await withSecret(`Basic ${secretValue}`, 'auth')).headers).toEqual({
      Authorization: `Basic ${secretValue}`,
    });
  });

  it('reads spec.auth, with a token exchange client secret from its Secret', async () => {
    const exchange = {
      mode: 'tokenExchange',
      tokenEndpoint: 'https://sso.example.com/token',
      clientId: 'mcp-broker',
      audience: 'weather',
    };
    const server = await resolveRegistration(
      registration({
        targetRef: { name: 'r' },
        auth: { ...exchange, clientSecretRef: { name: 'sso' } },
      }),
      lookups({
        'route:team-a/r': route,
        'secret:team-a/sso': {
          data: { clientSecret: Buffer.from(secretValue).toString('base64') },
        },
      }),
      routes,
    );
    expect(server.auth).toEqual({
      ...exchange,
      clientSecret: secretValue,
      clientAuthentication: 'client_secret_basic',
      subjectTokenAudience: exchange.tokenEndpoint,
    });
    const personal = await resolveRegistration(
      registration({
        targetRef: { name: 'r' },
        auth: { mode: 'userCredential', header: 'X-Api-Key' },
      }),
      lookups({ 'route:team-a/r': route }),
      routes,
    );
    expect(personal.auth).toEqual({ mode: 'userCredential', header: 'X-Api-Key', prefix: '' });
  });

  it.each([
    [
      'an inline token exchange client secret',
      registration({
        targetRef: { name: 'r' },
        auth: {
          mode: 'tokenExchange',
          tokenEndpoint: 'https://sso/t',
          clientId: 'c',
          clientSecret: secretValue,
        },
      }),
      { 'route:team-a/r': route },
      /spec.auth.clientSecret is not allowed: reference a Secret with spec.auth.clientSecretRef/,
    ],
    [
      'an unknown identity mode',
      registration({ targetRef: { name: 'r' }, auth: { mode: 'passthrough' } }),
      { 'route:team-a/r': route },
      /Invalid spec.auth.mode: mode must be one of/,
    ],
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
        routes,
      ).catch(e => e);
      expect(error).toBeInstanceOf(RegistrationError);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(secretValue);
    },
  );
});
