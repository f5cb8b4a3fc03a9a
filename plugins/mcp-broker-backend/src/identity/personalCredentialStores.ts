/*
 * Storage seams of the identity module (spec §11), implemented on the plugin's database in
 * store/DatabasePersonalCredentialStore.ts and shared by every replica:
 * - personal credentials, sealed (CredentialCipher): the store never sees a plain value;
 * - the URL-mode elicitations that asked a person for one (who, which server, which session).
 * (The broker's own keys: brokerKeyStores.ts.)
 */
import type { SealedCredential } from './CredentialCipher';

/** When a credential was stored and last replaced (epoch ms). */
export interface CredentialDates {
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** One stored credential of one principal for one server. */
export interface StoredCredential extends CredentialDates {
  readonly principal: string;
  readonly server: string;
  /** The identity of the server it was stored for (serverIdentity.ts). */
  readonly serverId: string;
  readonly sealed: SealedCredential;
}

/** A line of a principal's list: server name, identity and dates, never a value. */
export interface CredentialListing extends CredentialDates {
  readonly server: string;
  readonly serverId: string;
}

/** Sealed personal credentials per (principal, server). */
export interface PersonalCredentialStore {
  /** Stores or replaces the credential, for the server with `serverId`; resolves with its dates. */
  put(
    principal: string,
    server: string,
    serverId: string,
    sealed: SealedCredential,
    now: number,
  ): Promise<CredentialDates>;
  get(principal: string, server: string): Promise<StoredCredential | undefined>;
  /** The principal's credentials (server names, identities and dates only), by server name. */
  list(principal: string): Promise<CredentialListing[]>;
  /** Deletes it; false when there was none. */
  delete(principal: string, server: string): Promise<boolean>;
  /** The ids of the keys stored values were sealed with, and how many each. */
  keyIds(): Promise<Array<{ keyId: string; count: number }>>;
  /** Up to `limit` stored values sealed with `keyId`. */
  withKey(keyId: string, limit: number): Promise<StoredCredential[]>;
  /**
   * Replaces a value's sealing when it is still `expected` (compare-and-set: a value the person
   * replaced meanwhile is left alone). True when replaced.
   */
  reseal(stored: StoredCredential, next: SealedCredential): Promise<boolean>;
}

/** A URL-mode elicitation that asked a person to store a credential. */
export interface CredentialRequest {
  /** The `elicitationId` (≥ 128 random bits). */
  readonly id: string;
  readonly principal: string;
  readonly server: string;
  /** The 2025-11-25 client session to send `notifications/elicitation/complete` to. */
  readonly clientSessionId?: string;
  readonly expiresAt: number;
}

/** Pending credential requests, shared by the replicas until they expire or are completed. */
export interface CredentialRequestStore {
  create(request: CredentialRequest): Promise<void>;
  /** The request, unless unknown or expired. */
  get(id: string, now: number): Promise<CredentialRequest | undefined>;
  /** Deletes it; true for the one caller that did (completion happens once). */
  complete(id: string): Promise<boolean>;
  deleteExpired(now: number): Promise<void>;
}
