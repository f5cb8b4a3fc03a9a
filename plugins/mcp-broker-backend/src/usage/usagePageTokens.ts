/*
 * The `continue` tokens of `GET /usage/servers/:server` (docs/contracts/mcp-access.md §7.3):
 * the position after the page's last person, HMAC-signed and bound to what the page was asked
 * with (the route, the server, `days` and the caller), so a token is useless for another query
 * or person and cannot be forged to skip around. The key of each of the broker's requestState
 * keys is derived with HKDF-SHA256 (info `usage-page-tokens`), so one secret never serves two
 * purposes; a token sealed just before a key rotation still opens with the older key.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { InputError } from '@backstage/errors';
import type { HmacKeys } from '../inputRequests/requestStateKey';
import type { PeoplePosition } from './UsageStore';

const INFO = 'usage-page-tokens';
const derived = new WeakMap<Buffer, Buffer>();

function derive(key: Buffer): Buffer {
  let page = derived.get(key);
  if (page === undefined) {
    page = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), INFO, 32));
    derived.set(key, page);
  }
  return page;
}

function mac(key: Buffer, binding: string, payload: string): Buffer {
  return createHmac('sha256', derive(key)).update(`${binding}\u0000${payload}`).digest();
}

/** Seals and opens page positions; see the file comment. */
export class UsagePageTokens {
  constructor(private readonly keys: HmacKeys) {}

  /** A token for `position`, valid only for `binding` (route, server, days, caller). */
  seal(binding: string, position: PeoplePosition): string {
    const payload = Buffer.from(JSON.stringify([position.calls, position.principal])).toString(
      'base64url',
    );
    return `${payload}.${mac(this.keys.sealingKey(), binding, payload).toString('base64url')}`;
  }

  /** The position `token` holds; InputError when it is not one of ours for `binding`. */
  open(binding: string, token: string): PeoplePosition {
    const [payload, signature, extra] = token.split('.');
    const given = Buffer.from(signature ?? '', 'base64url');
    const valid =
      extra === undefined &&
      payload !== undefined &&
      this.keys.openingKeys().some(key => {
        const expected = mac(key, binding, payload);
        return expected.length === given.length && timingSafeEqual(expected, given);
      });
    if (valid) {
      const [calls, principal] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (typeof calls === 'number' && typeof principal === 'string') return { calls, principal };
    }
    throw new InputError(
      'Invalid continue token: pass the metadata.continue of the previous page, with the same server, days and sign-in, or leave it out to start from the first page',
    );
  }
}
