/*
 * The `requestState` of a 2026-07-28 client's `input_required` answer that asks for a personal
 * credential (spec §11 with §9): the URL elicitation has no held backend call behind it — the
 * retry simply tries again — so the state only has to say "this person was asked for this
 * server's credential" in a form nobody can forge or move: HMAC-SHA256 over the principal, the
 * server and an expiry (`mcpBroker.elicitationTtl`), with the keys every replica shares (the
 * broker's requestState keys: the current one seals, every one still in the ring opens). A replayed state does no harm (the retry checks the store again),
 * so it is not single-use. The prefix tells these states apart from the held calls' states.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacKeys } from '../inputRequests/requestStateKey';

/** Every credential retry state starts with this. */
export const CREDENTIAL_STATE_PREFIX = 'mcp-broker-credential.';

/** Why a credential retry state was refused. */
export class CredentialRetryStateError extends Error {
  readonly name = 'CredentialRetryStateError';
}

interface StateClaims {
  /** Principal. */
  p: string;
  /** Server. */
  s: string;
  /** Expiry, epoch ms. */
  e: number;
}

/** Seals and opens credential retry states; see the file comment. */
export class CredentialRetryStates {
  constructor(
    private readonly keys: HmacKeys,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when `state` is one of these (and not a held call's). */
  static isCredentialState(state: unknown): state is string {
    return typeof state === 'string' && state.startsWith(CREDENTIAL_STATE_PREFIX);
  }

  /** A state for `principal` asked for `server`'s credential. */
  seal(principal: string, server: string): string {
    const claims: StateClaims = { p: principal, s: server, e: this.now() + this.ttlMs };
    const payload = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${CREDENTIAL_STATE_PREFIX}${payload}.${this.mac(this.keys.sealingKey(), payload)}`;
  }

  /**
   * Checks that `state` was sealed here for `principal` and `server` and has not expired;
   * throws CredentialRetryStateError with a message for the client otherwise.
   */
  open(state: string, principal: string, server: string): void {
    const body = state.slice(CREDENTIAL_STATE_PREFIX.length);
    const dot = body.lastIndexOf('.');
    const payload = body.slice(0, dot);
    const mac = Buffer.from(body.slice(dot + 1), 'base64url');
    const sealedByUs = this.keys.openingKeys().some(key => {
      const expected = Buffer.from(this.mac(key, payload), 'base64url');
      return mac.length === expected.length && timingSafeEqual(mac, expected);
    });
    if (dot < 0 || !sealedByUs) {
      throw new CredentialRetryStateError(
        'requestState was not issued by this broker or was altered',
      );
    }
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as StateClaims;
    if (claims.p !== principal || claims.s !== server) {
      throw new CredentialRetryStateError('requestState belongs to another caller or request');
    }
    if (claims.e <= this.now()) {
      throw new CredentialRetryStateError(
        'requestState has expired: send the request again without it',
      );
    }
  }

  private mac(key: Buffer, payload: string): string {
    return createHmac('sha256', key).update(`credential-retry\n${payload}`).digest('base64url');
  }
}
