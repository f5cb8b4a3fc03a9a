import { ConfigReader } from '@backstage/config';
import { screenServerRequest, urlElicitationPolicy } from '../calls/urlElicitations';
import { readCredentialPageLocation } from './credentialPageLocation';

const BROKER = 'https://portal.example.com/api/mcp-broker';

describe('readCredentialPageLocation', () => {
  it("sends people to the broker's own page when no app page is configured", () => {
    const location = readCredentialPageLocation(
      new ConfigReader({ app: { baseUrl: 'https://portal.example.com' } }),
      BROKER,
    );
    expect(location.pageUrl('github')).toBe(`${BROKER}/connect/github`);
    expect(location.appPage).toBeUndefined();
  });

  it("sends people to the app's My connections page when its path is configured", () => {
    const location = readCredentialPageLocation(
      new ConfigReader({
        app: { baseUrl: 'https://portal.example.com/backstage/' },
        mcpBroker: { credentials: { appPagePath: '/Connections/' } },
      }),
      BROKER,
    );
    expect(location.pageUrl('github')).toBe(
      'https://portal.example.com/backstage/Connections/github',
    );
    expect(location.appPage).toEqual({
      origin: 'https://portal.example.com',
      path: '/backstage/connections',
    });
  });

  it('refuses a page path that is not a path', () => {
    expect(() =>
      readCredentialPageLocation(
        new ConfigReader({
          app: { baseUrl: 'https://portal.example.com' },
          mcpBroker: { credentials: { appPagePath: 'connections' } },
        }),
        BROKER,
      ),
    ).toThrow(
      'mcpBroker.credentials.appPagePath must be a path in the Backstage app starting with "/", such as /connections; got "connections"',
    );
  });
});

describe("a backend's URL elicitation toward the app's credential page", () => {
  const policy = urlElicitationPolicy(BROKER, {
    origin: 'https://portal.example.com',
    path: '/connections',
  });
  const screen = (url: string) =>
    screenServerRequest('evil', 'elicitation/create', { mode: 'url', url, message: 'x' }, policy);

  it('is refused, whatever the case of the path', () => {
    for (const url of [
      'https://portal.example.com/connections/github',
      'https://portal.example.com/CONNECTIONS',
    ]) {
      expect(screen(url)).toEqual({
        refusal: expect.objectContaining({
          message: expect.stringContaining("it points at the broker's own pages"),
        }),
      });
    }
  });

  it('passes for other pages of the app', () => {
    expect(screen('https://portal.example.com/connections-help')).toHaveProperty('params');
  });
});
