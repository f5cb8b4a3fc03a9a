/*
 * Personal credentials (spec §11, `userCredential`): a person stores one per server, once; the
 * broker presents it on that person's calls. Rules kept here, whatever the storage:
 * - a value is sealed (CredentialCipher) before it reaches the store, bound to its owner and to
 *   the server's identity (serverIdentity.ts: not only its name); only `reveal` opens one, only
 *   for a server with that identity, and only the call path uses it: no endpoint returns a value.
 *   A server that took a removed server's name is another server: it sees no credential, and the
 *   person is asked again (the stale row is replaced by their next store);
 * - a value is one header-safe line of at most 8 KiB;
 * - at start-up every key the stored values were sealed with must be configured: a wrong or
 *   missing key fails start-up with a message naming the config keys (never later, as garbage);
 *   values sealed with a previous key are re-sealed with the current one in the background, so
 *   the old key can be dropped after a restart of every replica.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import { CredentialCipher, CredentialKeyError } from './CredentialCipher';
import type {
  CredentialDates,
  CredentialListing,
  PersonalCredentialStore,
  StoredCredential,
} from './personalCredentialStores';

/** Longest personal credential, in characters. */
export const MAX_PERSONAL_CREDENTIAL_LENGTH = 8192;
/** Values re-sealed per batch during a key rotation. */
const RESEAL_BATCH = 100;

/** Options of {@link PersonalCredentialService.create}. */
export interface PersonalCredentialServiceOptions {
  store: PersonalCredentialStore;
  /** Undefined when `mcpBroker.credentialEncryptionKey` is not configured. */
  cipher: CredentialCipher | undefined;
  /** The identity of the server now configured under a name (serverIdentity.ts), if any. */
  serverIdentity(server: string): string | undefined;
  logger: LoggerService;
  /** Epoch ms; tests pass their own clock. */
  now?: () => number;
}

/** Thrown when personal credentials cannot be used because no key is configured. */
export class CredentialsNotConfiguredError extends Error {
  readonly name = 'CredentialsNotConfiguredError';
  constructor() {
    super(
      'Personal credentials are not configured on this broker: set mcpBroker.credentialEncryptionKey',
    );
  }
}

/** Stores, lists, deletes and (for the call path only) reveals personal credentials. */
export class PersonalCredentialService {
  private rotation: Promise<void> = Promise.resolve();

  /**
   * Checks that every stored value can be opened with the configured keys (throws
   * CredentialKeyError naming the config keys otherwise), then starts re-sealing values of
   * previous keys in the background.
   */
  static async create(
    options: PersonalCredentialServiceOptions,
  ): Promise<PersonalCredentialService> {
    const service = new PersonalCredentialService(options);
    await service.verifyKeys();
    service.rotation = service.resealPreviousKeys();
    return service;
  }

  private constructor(private readonly options: PersonalCredentialServiceOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** True when a key is configured (credentials can be stored and used). */
  get configured(): boolean {
    return this.options.cipher !== undefined;
  }

  /** Resolves when the start-up re-sealing has finished (tests, shutdown). */
  whenRotated(): Promise<void> {
    return this.rotation;
  }

  /** Stores (or replaces) `principal`'s credential for `server`. */
  async save(principal: string, server: string, value: string): Promise<CredentialDates> {
    const cipher = this.cipherOrThrow();
    checkValue(value);
    const serverId = this.options.serverIdentity(server);
    if (serverId === undefined) throw new InputError(`There is no MCP server "${server}"`);
    return this.options.store.put(
      principal,
      server,
      serverId,
      cipher.seal(value, principal, boundTo(server, serverId)),
      this.now,
    );
  }

  /**
   * The principal's stored credentials: server names and dates, never values; `current` says
   * whether it was stored for the server now configured under that name.
   */
  async list(principal: string): Promise<Array<CredentialListing & { current: boolean }>> {
    return (await this.options.store.list(principal)).map(listing => ({
      ...listing,
      current: listing.serverId === this.options.serverIdentity(listing.server),
    }));
  }

  /** Deletes the principal's credential for `server`; false when there was none. */
  delete(principal: string, server: string): Promise<boolean> {
    return this.options.store.delete(principal, server);
  }

  /** The principal's credential for `server`, for presenting it to that server; never to a client. */
  async reveal(principal: string, server: string): Promise<string | undefined> {
    const cipher = this.cipherOrThrow();
    const stored = await this.options.store.get(principal, server);
    if (stored === undefined || stored.serverId !== this.options.serverIdentity(server)) {
      return undefined;
    }
    return cipher.open(stored.sealed, principal, boundTo(server, stored.serverId));
  }

  private cipherOrThrow(): CredentialCipher {
    if (this.options.cipher === undefined) throw new CredentialsNotConfiguredError();
    return this.options.cipher;
  }

  private async verifyKeys(): Promise<void> {
    const { store, cipher } = this.options;
    for (const { keyId, count } of await store.keyIds()) {
      if (cipher === undefined) {
        throw new CredentialKeyError(
          `${count} personal credential(s) are stored encrypted with key ${keyId}, but mcpBroker.credentialEncryptionKey is not set: configure the key they were stored with`,
        );
      }
      if (!cipher.knows(keyId)) {
        throw new CredentialKeyError(
          `mcpBroker.credentialEncryptionKey is wrong: ${count} personal credential(s) are stored encrypted with key ${keyId}, which is neither it (key ${cipher.currentKeyId}) nor one of mcpBroker.previousCredentialEncryptionKeys. Configure the key they were stored with; to rotate, set the new key and list the old one under previousCredentialEncryptionKeys`,
        );
      }
      // Same id, other key (or a damaged row): opening one value shows it before any call does.
      const [sample] = await store.withKey(keyId, 1);
      if (sample !== undefined) cipher.open(sample.sealed, sample.principal, bindingOf(sample));
    }
  }

  private async resealPreviousKeys(): Promise<void> {
    const { store, cipher, logger } = this.options;
    if (cipher === undefined) return;
    try {
      for (const { keyId } of await store.keyIds()) {
        if (keyId === cipher.currentKeyId) continue;
        let resealed = 0;
        for (;;) {
          const batch = await store.withKey(keyId, RESEAL_BATCH);
          let progress = 0;
          for (const stored of batch) {
            const value = cipher.open(stored.sealed, stored.principal, bindingOf(stored));
            if (
              await store.reseal(stored, cipher.seal(value, stored.principal, bindingOf(stored)))
            ) {
              progress += 1;
            }
          }
          resealed += progress;
          // Nothing left, or only rows another replica keeps writing with the old key (a rolling
          // key change): stop rather than spin; the next start goes on.
          if (batch.length === 0 || progress === 0) break;
        }
        logger.info(
          `MCP broker: re-encrypted ${resealed} personal credential(s) of previous key ${keyId} with the current key ${cipher.currentKeyId}`,
        );
      }
    } catch (error) {
      logger.warn(
        `MCP broker: could not re-encrypt personal credentials with the current key (they stay readable with the previous keys): ${
          error instanceof Error ? error.message : error
        }`,
      );
    }
  }
}

/**
 * What a value is sealed for besides its owner: the server's name and identity, so a row moved
 * to another server (or rebound to another identity) does not decrypt.
 */
function boundTo(server: string, serverId: string): string {
  return `${server}@${serverId}`;
}

function bindingOf(stored: StoredCredential): string {
  return boundTo(stored.server, stored.serverId);
}

function checkValue(value: unknown): asserts value is string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InputError('The credential must be a non-empty string');
  }
  if (value.length > MAX_PERSONAL_CREDENTIAL_LENGTH) {
    throw new InputError(
      `The credential is too long: at most ${MAX_PERSONAL_CREDENTIAL_LENGTH} characters`,
    );
  }
  // It becomes an HTTP header value: one line of visible characters (and spaces, tabs).
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(value)) {
    throw new InputError('The credential must be one line without control characters');
  }
}
