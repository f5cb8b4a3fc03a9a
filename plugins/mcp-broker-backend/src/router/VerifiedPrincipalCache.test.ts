import type {
  AuthService,
  BackstageCredentials,
  DiscoveryService,
} from '@backstage/backend-plugin-api';
import { DefaultHttpAuthService } from '@backstage/backend-defaults/httpAuth';
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthenticationError, NotAllowedError } from '@backstage/errors';
import type { Request } from 'express';
import { VerifiedPrincipalCache } from './VerifiedPrincipalCache';

const T0 = Date.parse('2026-01-01T10:00:00Z');

function userCredentials(userEntityRef: string, expiresAt?: number): BackstageCredentials {
  return {
    $$type: '@backstage/BackstageCredentials',
    principal: { type: 'user', userEntityRef },
    ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt) }),
  } as BackstageCredentials;
}

function serviceCredentials(subject: string): BackstageCredentials {
  return {
    $$type: '@backstage/BackstageCredentials',
    principal: { type: 'service', subject },
  } as BackstageCredentials;
}

/** A JWT-shaped token whose payload carries `exp` (the signature is not checked by the double). */
function jwtLike(sub: string, expMs: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part({ sub, exp: Math.floor(expMs / 1000) })}.c2lnbmF0dXJl`;
}

/**
 * Backstage's real DefaultHttpAuthService (header parsing, allow-list checks, per-request memo)
 * over a scripted AuthService test double that counts verifications and answers from a table.
 */
function setup(options: { maxAgeMs?: number; maxEntries?: number } = {}) {
  let now = T0;
  const tokens = new Map<string, BackstageCredentials | Error>();
  const verified: string[] = [];
  const auth = {
    async authenticate(token: string) {
      verified.push(token);
      const result = tokens.get(token);
      if (result === undefined) throw new AuthenticationError('Illegal token');
      if (result instanceof Error) throw result;
      return result;
    },
    isPrincipal: (credentials: BackstageCredentials, type: string) =>
      type === 'unknown' || (credentials.principal as { type: string }).type === type,
    getNoneCredentials: async () => ({
      $$type: '@backstage/BackstageCredentials',
      principal: { type: 'none' },
    }),
  } as unknown as AuthService;
  const httpAuth = DefaultHttpAuthService.create({
    auth,
    discovery: {} as DiscoveryService,
    pluginId: 'mcp-broker',
  });
  const cache = VerifiedPrincipalCache.create({ httpAuth, now: () => now, ...options });
  // A new object per call, like Express: DefaultHttpAuthService memoizes per request object.
  const principal = (authorization?: string) =>
    cache.principalOf({ headers: authorization === undefined ? {} : { authorization } } as Request);
  return {
    cache,
    tokens,
    verified,
    principal,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('VerifiedPrincipalCache (real DefaultHttpAuthService over a scripted AuthService test double)', () => {
  it('verifies a token once and answers its later requests from the cache', async () => {
    const { tokens, verified, principal } = setup();
    tokens.set('alice-token', userCredentials('user:default/alice', T0 + 3600_000));
    for (let i = 0; i < 5; i += 1) {
      await expect(principal('Bearer alice-token')).resolves.toBe('user:user:default/alice');
    }
    expect(verified).toEqual(['alice-token']);
  });

  it('maps distinct tokens to their own principals, users and services alike', async () => {
    const { tokens, verified, principal } = setup();
    tokens.set('alice-token', userCredentials('user:default/alice', T0 + 3600_000));
    tokens.set('bob-token', userCredentials('user:default/bob', T0 + 3600_000));
    tokens.set('static-token', serviceCredentials('external:dev-scripts'));
    for (let round = 0; round < 2; round += 1) {
      await expect(principal('Bearer alice-token')).resolves.toBe('user:user:default/alice');
      await expect(principal('Bearer bob-token')).resolves.toBe('user:user:default/bob');
      await expect(principal('Bearer static-token')).resolves.toBe('service:external:dev-scripts');
    }
    expect(verified).toEqual(['alice-token', 'bob-token', 'static-token']);
  });

  it('never caches failures: a rejected token is verified (and rejected) every time', async () => {
    const { tokens, verified, principal } = setup();
    tokens.set(
      'restricted',
      new NotAllowedError("This token's access is restricted to plugin(s) 'catalog'"),
    );
    await expect(principal('Bearer garbage')).rejects.toThrow(AuthenticationError);
    await expect(principal('Bearer garbage')).rejects.toThrow(AuthenticationError);
    await expect(principal('Bearer restricted')).rejects.toThrow(NotAllowedError);
    await expect(principal('Bearer restricted')).rejects.toThrow(NotAllowedError);
    expect(verified).toEqual(['garbage', 'garbage', 'restricted', 'restricted']);
    // A token that starts to verify later (e.g. its key was published late) is then accepted.
    tokens.set('garbage', userCredentials('user:default/alice', T0 + 3600_000));
    await expect(principal('Bearer garbage')).resolves.toBe('user:user:default/alice');
  });

  it('defers to httpAuth without caching when there is no bearer header (401 every time)', async () => {
    const { cache, verified, principal } = setup();
    await expect(principal()).rejects.toThrow('Missing credentials');
    await expect(principal('Basic YWxpY2U6cHc=')).rejects.toThrow('Missing credentials');
    expect(verified).toEqual([]);
    expect(cache.size).toBe(0);
  });

  it('forgets a user token at its expiresAt, so an expired token is verified again (and refused)', async () => {
    const { tokens, verified, principal, advance } = setup();
    tokens.set('short', userCredentials('user:default/alice', T0 + 10_000));
    await expect(principal('Bearer short')).resolves.toBe('user:user:default/alice');
    advance(9_999);
    await expect(principal('Bearer short')).resolves.toBe('user:user:default/alice');
    expect(verified).toHaveLength(1);
    advance(1);
    tokens.set('short', new AuthenticationError('Failed user token verification'));
    await expect(principal('Bearer short')).rejects.toThrow('Failed user token verification');
    expect(verified).toHaveLength(2);
  });

  it('honours the signed exp claim of a JWT service token (credentials without expiresAt)', async () => {
    const { tokens, verified, principal, advance } = setup();
    const pluginToken = jwtLike('plugin:catalog', T0 + 5_000);
    tokens.set(pluginToken, serviceCredentials('plugin:catalog'));
    await expect(principal(`Bearer ${pluginToken}`)).resolves.toBe('service:plugin:catalog');
    advance(4_999);
    await principal(`Bearer ${pluginToken}`);
    expect(verified).toHaveLength(1);
    advance(1);
    await principal(`Bearer ${pluginToken}`);
    expect(verified).toHaveLength(2);
  });

  it('re-verifies after the cap even when the token lives longer, static tokens included', async () => {
    const { tokens, verified, principal, advance } = setup({ maxAgeMs: 60_000 });
    tokens.set('alice-token', userCredentials('user:default/alice', T0 + 3600_000));
    tokens.set('static-token', serviceCredentials('external:dev-scripts'));
    await principal('Bearer alice-token');
    await principal('Bearer static-token');
    advance(59_999);
    await principal('Bearer alice-token');
    await principal('Bearer static-token');
    expect(verified).toEqual(['alice-token', 'static-token']);
    advance(1);
    // A static token removed from the config (if a reload re-read it) is refused after the cap.
    tokens.delete('static-token');
    await principal('Bearer alice-token');
    await expect(principal('Bearer static-token')).rejects.toThrow('Illegal token');
    expect(verified).toEqual(['alice-token', 'static-token', 'alice-token', 'static-token']);
  });

  it('keeps at most maxEntries tokens, evicting the oldest, and removes expired entries on lookup', async () => {
    const { cache, tokens, verified, principal, advance } = setup({ maxEntries: 3 });
    for (const name of ['a', 'b', 'c', 'd'])
      tokens.set(name, userCredentials(`user:default/${name}`, T0 + 3600_000));
    for (const name of ['a', 'b', 'c', 'd']) await principal(`Bearer ${name}`);
    expect(cache.size).toBe(3);
    verified.length = 0;
    await principal('Bearer d');
    await principal('Bearer c');
    await principal('Bearer b');
    expect(verified).toEqual([]);
    await principal('Bearer a'); // evicted as the oldest: verified again, now evicts b
    expect(verified).toEqual(['a']);
    expect(cache.size).toBe(3);

    advance(60_000);
    tokens.delete('c');
    await expect(principal('Bearer c')).rejects.toThrow('Illegal token');
    expect(cache.size).toBe(2);
  });

  it('keys on the exact header: another spelling of the same token is verified on its own', async () => {
    const { tokens, verified, principal } = setup();
    tokens.set('alice-token', userCredentials('user:default/alice', T0 + 3600_000));
    await principal('Bearer alice-token');
    await principal('bearer alice-token');
    expect(verified).toEqual(['alice-token', 'alice-token']);
  });
});

describe('VerifiedPrincipalCache with Backstage mockServices.httpAuth (test double that accepts requests without a token)', () => {
  it('remembers nothing for a request without a bearer token, even when httpAuth accepts it', async () => {
    const inner = mockServices.httpAuth({
      defaultCredentials: mockCredentials.user('user:default/guest'),
    });
    let calls = 0;
    const httpAuth = {
      ...inner,
      credentials: ((req, options) => {
        calls += 1;
        return inner.credentials(req, options);
      }) as typeof inner.credentials,
    };
    const cache = VerifiedPrincipalCache.create({ httpAuth });
    for (const headers of [
      {},
      { authorization: 'Basic YWxpY2U6cHc=' },
      {},
      { authorization: 'Basic YWxpY2U6cHc=' },
    ]) {
      await expect(cache.principalOf({ headers } as Request)).resolves.toBe(
        'user:user:default/guest',
      );
    }
    expect(calls).toBe(4);
    expect(cache.size).toBe(0);
  });
});
