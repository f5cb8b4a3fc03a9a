/*
 * `mcpBroker.credentialProfiles.<name>` (spec §11.1): the credential modes an admin offers to
 * Kubernetes registrations. A registration is written by a namespace's owners, so it may only
 * *name* a profile; the profile says everything that decides whose credential goes where — the
 * mode and its settings (token endpoint, client, audience, target plugin, header …), which
 * namespaces may use it and, optionally, which server URLs.
 *
 *   mcpBroker:
 *     credentialProfiles:
 *       company-sso:
 *         namespaces: [team-a, team-b]          # required
 *         urls: ['https://*.tools.example.com/mcp'] # optional (UrlPattern)
 *         mode: tokenExchange
 *         tokenEndpoint: https://sso.example.com/…/token
 *         clientId: mcp-broker
 *         clientSecret: ${SSO_SECRET}           # or clientSecretRef: { namespace, name, key }
 *         audience: tools
 *
 * The mode part goes through `parseServerAuth`, the parser of `mcpBroker.servers[].auth`, so a
 * mode means the same wherever it is declared. A token exchange client secret may instead come
 * from a Secret the admin names (`clientSecretRef`, any namespace the broker may read); it is
 * read when a registration is resolved, so a rotated Secret is used at the next resync. Read at
 * start-up (and on a config reload); every mistake is an InputError naming the key.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { isNamespaceName } from '@devportal/backend-kubernetes-client';
import {
  parseServerAuth,
  ServerAuthError,
  type ServerAuth,
  type TokenExchangeAuth,
} from './serverAuth';
import { UrlPattern, UrlPatternError } from './UrlPattern';

/** The config section this file reads, for messages. */
export const CREDENTIAL_PROFILES_PATH = 'mcpBroker.credentialProfiles';

/** A Secret key named by an admin (the Secret's namespace is the admin's choice). */
export interface SecretKeyRef {
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
}

interface ProfileGrant {
  /** The profile's name (what a registration names). */
  readonly name: string;
  /** Namespaces whose registrations may use it. */
  readonly namespaces: ReadonlySet<string>;
  /** When set, the server URL must match one of them. */
  readonly urls?: readonly UrlPattern[];
}

/**
 * One credential profile, parsed. A token exchange with `clientSecretRef` has no `clientSecret`
 * yet (its type says so): the registration mapping reads it from the Secret.
 */
export type CredentialProfile = ProfileGrant &
  (
    | { readonly auth: ServerAuth; readonly clientSecretRef?: undefined }
    | {
        readonly auth: Omit<TokenExchangeAuth, 'clientSecret'>;
        readonly clientSecretRef: SecretKeyRef;
      }
  );

const PROFILE_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** Stands in for a Secret's value while the rest of a token exchange is checked at start-up. */
const SECRET_READ_LATER = 'read-from-the-secret-later';

function stringArray(raw: unknown, at: string): string[] | undefined {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.some(v => typeof v !== 'string')) {
    throw new InputError(`Invalid ${at}: must be a list of strings`);
  }
  return raw as string[];
}

function readSecretKeyRef(raw: unknown, at: string): SecretKeyRef {
  const ref = raw as Record<string, unknown> | null;
  if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) {
    throw new InputError(`Invalid ${at}: write { namespace, name, key }`);
  }
  const field = (key: string, fallback?: string) => {
    const value = ref[key] ?? fallback;
    if (typeof value !== 'string' || value === '') {
      throw new InputError(`Invalid ${at}.${key}: required, a non-empty string`);
    }
    return value;
  };
  const namespace = field('namespace');
  if (!isNamespaceName(namespace)) {
    throw new InputError(`Invalid ${at}.namespace "${namespace}": not a namespace name`);
  }
  return { namespace, name: field('name'), key: field('key', 'clientSecret') };
}

function readProfile(name: string, raw: unknown): CredentialProfile {
  const at = `${CREDENTIAL_PROFILES_PATH}.${name}`;
  if (!PROFILE_NAME.test(name)) {
    throw new InputError(
      `Invalid ${at}: a profile name uses lower-case letters, digits and "-" (it is written in registrations)`,
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InputError(`Invalid ${at}: must be an object with mode and namespaces`);
  }
  const { namespaces, urls, clientSecretRef, ...modeSettings } = raw as Record<string, unknown>;
  const namespaceList = stringArray(namespaces, `${at}.namespaces`);
  if (namespaceList === undefined || namespaceList.length === 0) {
    throw new InputError(
      `Invalid ${at}.namespaces: required, the namespaces whose registrations may use this profile`,
    );
  }
  for (const [i, ns] of namespaceList.entries()) {
    if (!isNamespaceName(ns)) {
      throw new InputError(`Invalid ${at}.namespaces[${i}] "${ns}": not a namespace name`);
    }
  }
  const urlList = stringArray(urls, `${at}.urls`);
  let patterns: UrlPattern[] | undefined;
  try {
    patterns = urlList?.map((pattern, i) => UrlPattern.parse(pattern, `${at}.urls[${i}]`));
  } catch (error) {
    if (error instanceof UrlPatternError) throw new InputError(error.message);
    throw error;
  }
  if (patterns !== undefined && patterns.length === 0) {
    throw new InputError(`Invalid ${at}.urls: list at least one pattern, or leave urls out`);
  }
  const grant = { name, namespaces: new Set(namespaceList), ...(patterns && { urls: patterns }) };

  if (modeSettings.mode === undefined || modeSettings.mode === 'broker') {
    throw new InputError(
      `Invalid ${at}.mode: a profile names a personal mode (backstage, tokenExchange or userCredential); a registration without a profile already uses the broker's own credentials`,
    );
  }
  if (clientSecretRef === undefined) {
    return { ...grant, auth: parseAuth(modeSettings, at) };
  }
  if (modeSettings.mode !== 'tokenExchange') {
    throw new InputError(`Invalid ${at}.clientSecretRef: only a tokenExchange profile has one`);
  }
  if (modeSettings.clientSecret !== undefined) {
    throw new InputError(`Invalid ${at}: set clientSecret or clientSecretRef, not both`);
  }
  const ref = readSecretKeyRef(clientSecretRef, `${at}.clientSecretRef`);
  const { clientSecret: _placeholder, ...auth } = parseAuth(
    { ...modeSettings, clientSecret: SECRET_READ_LATER },
    at,
  ) as TokenExchangeAuth;
  return { ...grant, auth, clientSecretRef: ref };
}

function parseAuth(settings: Record<string, unknown>, at: string): ServerAuth {
  try {
    return parseServerAuth(settings, at);
  } catch (error) {
    if (error instanceof ServerAuthError) throw new InputError(error.message);
    throw error;
  }
}

/**
 * Reads `mcpBroker.credentialProfiles` of the broker's config section (empty when absent).
 * Throws an InputError naming the key of the first invalid profile.
 */
export function readCredentialProfiles(
  broker: Config | undefined,
): ReadonlyMap<string, CredentialProfile> {
  const section = broker?.getOptionalConfig('credentialProfiles');
  const profiles = new Map<string, CredentialProfile>();
  for (const name of section?.keys() ?? []) {
    profiles.set(name, readProfile(name, section!.getOptional(name)));
  }
  return profiles;
}

/**
 * The profiles as `{ name, auth }` pairs, for start-up checks over every configured mode (e.g.
 * that `userCredential` has an encryption key); the name is the profile's config key.
 */
export function profileModes(
  profiles: ReadonlyMap<string, CredentialProfile>,
): Array<{ name: string; auth?: ServerAuth }> {
  // A profile with clientSecretRef is a token exchange without its secret yet: its mode is all
  // such a check may see, and it needs no key.
  return [...profiles.values()].map(profile => ({
    name: `${CREDENTIAL_PROFILES_PATH}.${profile.name}`,
    ...(profile.clientSecretRef === undefined ? { auth: profile.auth } : {}),
  }));
}
