/*
 * Token exchange (spec §11) against the standards-following RFC 8693 server of our test
 * packages: the broker's subject token, client authentication both ways, the errors people see
 * (never a token or secret), and the per-(server, person) cache: hits, one exchange for
 * concurrent misses, refresh 30 s before expiry, eviction.
 */
import { startTokenExchangeServer, type TokenExchangeServer } from '@internal/test-mcp-backends';
import { ExchangedTokens, TOKEN_REFRESH_MARGIN_MS } from './ExchangedTokens';
import { parseServerAuth, type TokenExchangeAuth } from './serverAuth';
import { SubjectTokenIssuer } from './SubjectTokenIssuer';
import { exchangeToken, TokenExchangeError } from './TokenExchangeClient';
import { serveJwks } from './__testUtils__/servedJwks';

const BROKER_ISSUER = 'http://broker.test/api/mcp-broker';
const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'));

describe('token exchange', () => {
  let issuer: SubjectTokenIssuer;
  let jwks: Awaited<ReturnType<typeof serveJwks>>;
  let sts: TokenExchangeServer;
  let auth: TokenExchangeAuth;

  beforeAll(async () => {
    issuer = await SubjectTokenIssuer.create({ issuer: BROKER_ISSUER });
    jwks = await serveJwks(() => issuer);
    sts = await startTokenExchangeServer({
      clients: { 'mcp-broker': 'broker secret+&' },
      trustedIssuers: [{ issuer: BROKER_ISSUER, jwksUrl: jwks.url }],
      allowedTargets: ['whoami', 'https://whoami.example.com/mcp'],
    });
    auth = parseServerAuth(
      {
        mode: 'tokenExchange',
        tokenEndpoint: sts.tokenEndpoint,
        clientId: 'mcp-broker',
        clientSecret: 'broker secret+&',
        audience: 'whoami',
        scope: 'whoami:read',
      },
      'auth',
    ) as TokenExchangeAuth;
  });
  afterAll(async () => {
    await sts.close();
    await jwks.close();
  });

  it('signs a two-minute subject token naming only the user, for the token endpoint', () => {
    const claims = claimsOf(issuer.issue('user:default/alice', sts.tokenEndpoint));
    expect(claims).toEqual({
      iss: BROKER_ISSUER,
      sub: 'user:default/alice',
      aud: sts.tokenEndpoint,
      iat: expect.any(Number),
      exp: claims.iat + 120,
      jti: expect.any(String),
    });
    expect(issuer.jwks().keys[0]).toMatchObject({
      kty: 'EC',
      crv: 'P-256',
      alg: 'ES256',
      use: 'sig',
    });
    expect(issuer.jwks().keys[0]).not.toHaveProperty('d');
  });

  it.each(['client_secret_basic', 'client_secret_post'] as const)(
    'exchanges the subject token for an access token of the person for the audience (%s)',
    async clientAuthentication => {
      const token = await exchangeToken(
        { ...auth, clientAuthentication },
        issuer.issue('user:default/alice', auth.subjectTokenAudience),
        AbortSignal.timeout(10_000),
      );
      expect(token.expiresInS).toBe(300);
      expect(claimsOf(token.accessToken)).toMatchObject({
        iss: sts.issuer,
        sub: 'user:default/alice',
        aud: 'whoami',
        act: { sub: 'mcp-broker' },
        scope: 'whoami:read',
      });
    },
  );

  it('names the refusal, never the secret or a token', async () => {
    const closed = await serveJwks(() => issuer);
    await closed.close();
    const unreachable = closed.url.replace('/jwks', '/token');
    const subject = issuer.issue('user:default/alice', auth.subjectTokenAudience);
    const failures = await Promise.all([
      exchangeToken({ ...auth, clientSecret: 'wrong' }, subject, AbortSignal.timeout(10_000)).catch(
        e => e,
      ),
      exchangeToken({ ...auth, audience: 'elsewhere' }, subject, AbortSignal.timeout(10_000)).catch(
        e => e,
      ),
      exchangeToken(auth, `${subject}x`, AbortSignal.timeout(10_000)).catch(e => e),
      exchangeToken(
        { ...auth, tokenEndpoint: unreachable },
        subject,
        AbortSignal.timeout(10_000),
      ).catch(e => e),
    ]);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(TokenExchangeError);
      expect(failure.message).not.toContain('wrong');
      expect(failure.message).not.toContain(subject.slice(-20));
    }
    const host = new URL(sts.tokenEndpoint).host;
    expect(failures.map(f => f.message)).toEqual([
      `token exchange at ${host} was refused: HTTP 401 invalid_client`,
      `token exchange at ${host} was refused: HTTP 400 invalid_target`,
      expect.stringMatching(
        new RegExp(`^token exchange at ${host} was refused: HTTP 400 invalid_grant`),
      ),
      `token exchange at ${new URL(unreachable).host} failed: the endpoint is unreachable (ECONNREFUSED)`,
    ]);
  });

  describe('ExchangedTokens', () => {
    let now = 1_000_000;
    const tokensWith = () => new ExchangedTokens({ issuer, timeoutMs: 10_000, now: () => now });

    it('exchanges once per person and server until 30 s before expiry, then again', async () => {
      const tokens = tokensWith();
      const before = sts.exchanges.length;
      const first = await tokens.tokenFor('whoami', auth, 'user:default/alice');
      expect(await tokens.tokenFor('whoami', auth, 'user:default/alice')).toBe(first);
      const carols = await tokens.tokenFor('whoami', auth, 'user:default/carol');
      expect(claimsOf(carols).sub).toBe('user:default/carol');
      expect(sts.exchanges.length - before).toBe(2);

      now += 300_000 - TOKEN_REFRESH_MARGIN_MS - 1;
      expect(await tokens.tokenFor('whoami', auth, 'user:default/alice')).toBe(first);
      now += 1;
      const refreshed = await tokens.tokenFor('whoami', auth, 'user:default/alice');
      expect(claimsOf(refreshed).jti).not.toBe(claimsOf(first).jti);
      expect(sts.exchanges.length - before).toBe(3);
    });

    it('shares one exchange among concurrent misses, and exchanges again after forget or a settings change', async () => {
      const tokens = tokensWith();
      const before = sts.exchanges.length;
      const all = await Promise.all(
        Array.from({ length: 5 }, () => tokens.tokenFor('whoami', auth, 'user:default/alice')),
      );
      expect(new Set(all).size).toBe(1);
      expect(sts.exchanges.length - before).toBe(1);
      tokens.forget('whoami', 'user:default/alice');
      await tokens.tokenFor('whoami', auth, 'user:default/alice');
      await tokens.tokenFor('whoami', { ...auth, scope: 'other' }, 'user:default/alice');
      expect(sts.exchanges.length - before).toBe(3);
    });

    it('keeps no token with too short a life, and records the last failure for /status', async () => {
      const tokens = tokensWith();
      sts.tokenLifetimeS = 20; // under the 30 s margin: used for the one call only
      try {
        await tokens.tokenFor('whoami', auth, 'user:default/dave');
        expect(tokens.size).toBe(0);
      } finally {
        sts.tokenLifetimeS = 300;
      }
      sts.failNext({ status: 503, error: 'temporarily_unavailable', description: 'maintenance' });
      await expect(tokens.tokenFor('whoami', auth, 'user:default/dave')).rejects.toThrow(
        /was refused: HTTP 503 temporarily_unavailable$/,
      );
      expect(tokens.lastFailure('whoami')).toEqual({
        at: new Date(now).toISOString(),
        message: expect.stringMatching(/was refused: HTTP 503 temporarily_unavailable$/),
      });
      // The IdP's free text never reaches the person or /status: an `error` that is no OAuth
      // code is left out, and so is every error_description.
      sts.failNext({
        status: 400,
        error: 'Your session expired: store your credential at https://look.alike/credentials',
        description: 'see https://look.alike/credentials',
      });
      const refused = await tokens.tokenFor('whoami', auth, 'user:default/dave').catch(e => e);
      expect(refused.message).toMatch(/was refused: HTTP 400$/);
      expect(JSON.stringify(tokens.lastFailure('whoami'))).not.toContain('look.alike');
    });
  });
});
