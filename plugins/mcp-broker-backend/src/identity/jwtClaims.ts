/*
 * Reading a claim of a token that looks like a JWT, without verifying it: only for hints about a
 * token something else has verified or will verify (its expiry, to cache it no longer than that).
 */

/** The `exp` claim (ms) of a token that looks like a JWT, else undefined. */
export function jwtExpiryMs(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const exp = (
      JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }
    ).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
