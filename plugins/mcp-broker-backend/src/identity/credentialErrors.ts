/*
 * What a person is told when the broker cannot present their credential, or a backend refuses
 * it (spec §11). Each is that person's error — a tool error naming what to do, or the MCP
 * URL-elicitation answer — never a backend outage: the broker's own connection to the server and
 * other people's calls are untouched. No message contains a credential.
 */
import type { CredentialMode } from './serverAuth';

/** JSON-RPC code of the URL elicitation required error (MCP 2025-11-25, `URLElicitationRequiredError`). */
export const URL_ELICITATION_REQUIRED = -32042;

/** A URL-mode elicitation: where the person goes to store the credential. */
export interface CredentialElicitation {
  readonly mode: 'url';
  /** The broker's page for storing the credential. */
  readonly url: string;
  readonly message: string;
  /** Present for 2025-11-25 clients (the id `notifications/elicitation/complete` names). */
  readonly elicitationId?: string;
}

/**
 * The call needs a personal credential the person has not stored (`userCredential`): a
 * 2025-11-25 client gets the URL elicitation required error (-32042), a 2026-07-28 client an
 * `input_required` result with a URL-mode `elicitation/create`.
 */
export class CredentialRequiredError extends Error {
  readonly name = 'CredentialRequiredError';
  constructor(
    readonly server: string,
    readonly elicitation: CredentialElicitation,
  ) {
    super(elicitation.message);
  }

  /** The JSON-RPC error object of a 2025-11-25 answer. */
  toJsonRpcError(): { code: number; message: string; data: Record<string, unknown> } {
    return {
      code: URL_ELICITATION_REQUIRED,
      message: this.message,
      data: { elicitations: [{ ...this.elicitation }] },
    };
  }
}

/**
 * The broker could not obtain the person's credential (a failed token exchange, a caller the mode
 * cannot represent, personal credentials not configured) or the backend refused it. For a
 * `tools/call` this is a tool result with `isError: true`; for other methods a JSON-RPC error.
 */
export class PersonalCredentialError extends Error {
  readonly name = 'PersonalCredentialError';
  constructor(
    readonly server: string,
    readonly mode: CredentialMode,
    message: string,
    /** Why, for the audit trail and tests: what went wrong, in one word. */
    readonly reason:
      | 'exchange-failed'
      | 'refused'
      | 'unsupported-principal'
      | 'not-configured'
      | 'credential-required'
      | 'token-unavailable',
  ) {
    super(message);
  }
}

/** JSON-RPC error code of a {@link PersonalCredentialError} outside `tools/call`. */
export const PERSONAL_CREDENTIAL_ERROR_CODE = -32000;

/**
 * The error a person is told when `server` answered 401 or 403 to the credential presented on
 * their behalf (`status` is the medium's status, shown for people to read). `pageUrl` is the
 * broker's page for storing a personal credential (userCredential servers).
 */
export function credentialRefused(
  server: string,
  mode: CredentialMode,
  status: number | undefined,
  pageUrl: string,
): PersonalCredentialError {
  const answered = status === undefined ? 'refused it' : `answered HTTP ${status}`;
  switch (mode) {
    case 'userCredential':
      return new PersonalCredentialError(
        server,
        mode,
        `Your credential for ${server} was refused (the server ${answered}): it may have expired, been revoked or lack a permission. Store a new one at ${pageUrl} and call again.`,
        'refused',
      );
    case 'tokenExchange':
      return new PersonalCredentialError(
        server,
        mode,
        `Your credential for ${server} was refused (the server ${answered} to the token the broker obtained for you by token exchange): your account may not have access to ${server}. Ask its owners for access; the next call obtains a fresh token.`,
        'refused',
      );
    default:
      return new PersonalCredentialError(
        server,
        mode,
        `Your credential for ${server} was refused (the server ${answered} to your Backstage identity): your account may not have the permission this needs. Ask the owners of ${server} for access.`,
        'refused',
      );
  }
}
