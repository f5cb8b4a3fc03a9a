/* URL patterns of credential profiles: host labels, path segments, any path; nothing smuggled. */
import { UrlPattern } from './UrlPattern';

const matches = (pattern: string, url: string) =>
  UrlPattern.parse(pattern, 'urls[0]').matches(new URL(url));

describe('UrlPattern', () => {
  it('matches one host label with * and never across a dot', () => {
    expect(matches('https://*.tools.example.com/mcp', 'https://search.tools.example.com/mcp')).toBe(
      true,
    );
    expect(matches('https://*.tools.example.com/mcp', 'https://a.b.tools.example.com/mcp')).toBe(
      false,
    );
    expect(
      matches('https://*.tools.example.com/mcp', 'https://evil.com/.tools.example.com/mcp'),
    ).toBe(false);
    expect(
      matches('https://*.tools.example.com/mcp', 'https://tools.example.com.evil.com/mcp'),
    ).toBe(false);
  });

  it('matches one path segment with *, any path with **, and the path exactly otherwise', () => {
    expect(matches('https://h.example.com/mcp/*', 'https://h.example.com/mcp/v1')).toBe(true);
    expect(matches('https://h.example.com/mcp/*', 'https://h.example.com/mcp/v1/x')).toBe(false);
    expect(matches('https://h.example.com/**', 'https://h.example.com/a/b/c')).toBe(true);
    expect(matches('https://h.example.com/mcp', 'https://h.example.com/mcp')).toBe(true);
    expect(matches('https://h.example.com/mcp', 'https://h.example.com/mcp/')).toBe(false);
    expect(matches('https://h.example.com/mcp', 'https://h.example.com/mcp?x=1')).toBe(true);
  });

  it('compares scheme and port, with default ports normalised', () => {
    expect(matches('https://h.example.com/mcp', 'http://h.example.com/mcp')).toBe(false);
    expect(matches('https://h.example.com:443/mcp', 'https://h.example.com/mcp')).toBe(true);
    expect(matches('https://h.example.com/mcp', 'https://h.example.com:8443/mcp')).toBe(false);
    expect(matches('http://127.0.0.1:3000/**', 'http://127.0.0.1:3000/mcp')).toBe(true);
    expect(matches('HTTPS://H.Example.com/mcp', 'https://h.example.com/mcp')).toBe(true);
  });

  it('never matches a URL with user information', () => {
    expect(matches('https://h.example.com/mcp', 'https://me:pw@h.example.com/mcp')).toBe(false);
  });

  it.each([
    'h.example.com/mcp',
    'ftp://h.example.com/mcp',
    'https://h.example.com',
    'https://h.example.com/mcp?x=1',
    'https://me@h.example.com/mcp',
    'https://**.example.com/mcp',
    'https://h_x.example.com/mcp',
  ])('refuses the pattern %s, naming the key', pattern => {
    expect(() => UrlPattern.parse(pattern, 'mcpBroker.credentialProfiles.x.urls[0]')).toThrow(
      /^Invalid mcpBroker\.credentialProfiles\.x\.urls\[0\]/,
    );
  });
});
