/* `auth` of a server (spec §11): defaults, every mode, and errors that name the key. */
import { parseServerAuth, ServerAuthError } from './serverAuth';

const at = 'mcpBroker.servers[0].auth';
const exchange = {
  mode: 'tokenExchange',
  tokenEndpoint: 'https://sso.example.com/realms/dev/protocol/openid-connect/token',
  clientId: 'mcp-broker',
  clientSecret: 's3cret',
};

describe('parseServerAuth', () => {
  it('is broker mode without a section or with mode broker', () => {
    expect(parseServerAuth(undefined, at)).toEqual({ mode: 'broker' });
    expect(parseServerAuth({ mode: 'broker' }, at)).toEqual({ mode: 'broker' });
  });

  it('reads backstage mode with its target plugin', () => {
    expect(parseServerAuth({ mode: 'backstage', targetPluginId: 'mcp-actions' }, at)).toEqual({
      mode: 'backstage',
      targetPluginId: 'mcp-actions',
    });
    expect(() => parseServerAuth({ mode: 'backstage' }, at)).toThrow(
      `Invalid ${at}.targetPluginId: targetPluginId is required`,
    );
    expect(() =>
      parseServerAuth({ mode: 'backstage', targetPluginId: 'Not A Plugin' }, at),
    ).toThrow(/targetPluginId must be a Backstage plugin id/);
  });

  it('reads token exchange with Basic client authentication and the token endpoint as subject audience by default', () => {
    expect(
      parseServerAuth({ ...exchange, audience: 'github-mcp', scope: 'repo read:org' }, at),
    ).toEqual({
      ...exchange,
      clientAuthentication: 'client_secret_basic',
      audience: 'github-mcp',
      scope: 'repo read:org',
      subjectTokenAudience: exchange.tokenEndpoint,
    });
    expect(
      parseServerAuth(
        {
          ...exchange,
          clientAuthentication: 'client_secret_post',
          resource: 'https://mcp.example.com/mcp',
          subjectTokenAudience: 'https://sso.example.com/realms/dev',
        },
        at,
      ),
    ).toMatchObject({
      clientAuthentication: 'client_secret_post',
      resource: 'https://mcp.example.com/mcp',
      subjectTokenAudience: 'https://sso.example.com/realms/dev',
    });
  });

  it('names the missing or malformed token-exchange key, never the secret', () => {
    const { clientSecret: _omitted, ...withoutSecret } = exchange;
    expect(() => parseServerAuth(withoutSecret, at)).toThrow(
      `Invalid ${at}.clientSecret: clientSecret is required`,
    );
    expect(() => parseServerAuth({ ...exchange, tokenEndpoint: 'ftp://x' }, at)).toThrow(
      `Invalid ${at}.tokenEndpoint: tokenEndpoint must be an absolute http(s) URL`,
    );
    expect(() =>
      parseServerAuth({ ...exchange, clientAuthentication: 'private_key_jwt' }, at),
    ).toThrow(/clientAuthentication must be client_secret_basic or client_secret_post/);
    const multiLine = () => parseServerAuth({ ...exchange, clientSecret: 'two\nlines' }, at);
    expect(multiLine).toThrow(ServerAuthError);
    expect(multiLine).toThrow(`Invalid ${at}.clientSecret: clientSecret must be one line`);
  });

  it('reads userCredential with Authorization: Bearer by default, or a header of its own without prefix', () => {
    expect(parseServerAuth({ mode: 'userCredential' }, at)).toEqual({
      mode: 'userCredential',
      header: 'Authorization',
      prefix: 'Bearer ',
    });
    expect(
      parseServerAuth(
        { mode: 'userCredential', header: 'X-Api-Key', description: 'a key from /settings' },
        at,
      ),
    ).toEqual({
      mode: 'userCredential',
      header: 'X-Api-Key',
      prefix: '',
      description: 'a key from /settings',
    });
    expect(
      parseServerAuth({ mode: 'userCredential', header: 'authorization', prefix: 'token ' }, at),
    ).toMatchObject({ prefix: 'token ' });
  });

  it('refuses a header the broker sets itself and an unknown mode', () => {
    expect(() => parseServerAuth({ mode: 'userCredential', header: 'Mcp-Session-Id' }, at)).toThrow(
      `Invalid ${at}.header: header is set by the broker itself and cannot carry a credential`,
    );
    expect(() => parseServerAuth({ mode: 'passthrough' }, at)).toThrow(
      `Invalid ${at}.mode: mode must be one of broker, backstage, tokenExchange, userCredential`,
    );
    expect(() => parseServerAuth('backstage', at)).toThrow(`Invalid ${at}: must be an object`);
  });
});
