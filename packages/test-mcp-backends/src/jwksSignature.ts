/*
 * Whether a JWT's signature verifies against a JWK Set (its header's `kid`, the key's algorithm):
 * what a relying party that fetched the set checks first. Claims (expiry, audience) are not looked
 * at — tests that move a server's clock compare signatures, not lifetimes.
 */
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';

/** True when `token`'s signature verifies with a key of `jwks` (a JWK Set as served). */
export async function signedByJwks(
  token: string,
  jwks: { keys: ReadonlyArray<object> },
): Promise<boolean> {
  try {
    await compactVerify(token, createLocalJWKSet(jwks as JSONWebKeySet));
    return true;
  } catch {
    return false;
  }
}
