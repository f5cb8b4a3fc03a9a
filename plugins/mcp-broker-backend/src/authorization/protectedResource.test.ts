import { bearerChallenge, pathInsertedWellKnownUrl } from './protectedResource';

describe('pathInsertedWellKnownUrl', () => {
  it.each([
    [
      'https://portal.example.com/api/mcp-broker/mcp',
      'https://portal.example.com/.well-known/x/api/mcp-broker/mcp',
    ],
    ['https://portal.example.com/api/auth/', 'https://portal.example.com/.well-known/x/api/auth'],
    ['http://localhost:7007/', 'http://localhost:7007/.well-known/x'],
    [
      'https://example.com/base/api/auth?ignored=1',
      'https://example.com/.well-known/x/base/api/auth',
    ],
  ])('inserts the well-known segment between the origin and the path of %s', (url, expected) => {
    expect(pathInsertedWellKnownUrl(url, 'x').toString()).toBe(expected);
  });
});

describe('bearerChallenge', () => {
  it('names the metadata, and the error only when given', () => {
    expect(bearerChallenge({ resourceMetadataUrl: 'https://x/m' })).toBe(
      'Bearer resource_metadata="https://x/m"',
    );
    expect(
      bearerChallenge({
        resourceMetadataUrl: 'https://x/m',
        error: 'invalid_token',
        errorDescription: 'expired',
      }),
    ).toBe(
      'Bearer error="invalid_token", error_description="expired", resource_metadata="https://x/m"',
    );
  });

  it('keeps quotes, backslashes and control characters out of the quoted values', () => {
    expect(
      bearerChallenge({
        resourceMetadataUrl: 'https://x/"m\\',
        error: 'invalid_token',
        errorDescription: 'a "b"\r\nc é',
      }),
    ).toBe(
      'Bearer error="invalid_token", error_description="a bc ", resource_metadata="https://x/m"',
    );
  });
});
