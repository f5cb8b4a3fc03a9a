/*
 * Which credential a registration's server presents on a person's behalf (spec §11.1:
 * registrations ask, admins decide). A registration never writes credential settings of its
 * own: it may name one of the admin's credential profiles (`mcpBroker.credentialProfiles`), in
 * `spec.credentialProfile` or — because Kuadrant's own CRD prunes spec fields it does not know,
 * while annotations survive — in the annotation `devportal.kuadrant.io/credential-profile`
 * (when both are written they must agree). Without one, the server uses the broker's own
 * credentials (`broker` mode).
 *
 * A registration is refused (it serves nothing: no server entry at all) when it
 * - spells out `spec.auth` (any field): it would choose the token endpoint, the subject token's
 *   audience or the plugin whose on-behalf-of tokens it receives;
 * - names a profile that does not exist, or one its namespace may not use;
 * - has a URL the profile's `urls` do not allow, or — `backstage` mode without `urls` — a URL
 *   that is not the target plugin's own (Backstage's discovery service, internal or external
 *   base URL): on-behalf-of tokens go only where that plugin is served.
 * Every refusal is a RegistrationError with a reason for the registration's status condition.
 */
import type { CredentialProfile } from '../identity/credentialProfiles';
import { BROKER_AUTH, type ServerAuth } from '../identity/serverAuth';
import {
  RegistrationError,
  type KubeObjectLike,
  type RegistrationLookups,
} from './registrationTypes';
import { readSecretValue } from './readSecretValue';

/** Annotation naming a credential profile (survives CRDs that prune `spec.credentialProfile`). */
export const CREDENTIAL_PROFILE_ANNOTATION = 'devportal.kuadrant.io/credential-profile';

/** What deciding a registration's credential needs besides the registration. */
export interface RegistrationAuthContext {
  /** The admin's profiles, by name. */
  readonly profiles: ReadonlyMap<string, CredentialProfile>;
  readonly lookups: RegistrationLookups;
  /** Backstage's base URLs of a plugin (discovery service: internal and external). */
  pluginBaseUrls(pluginId: string): Promise<readonly string[]>;
}

/** The decision: the server's `auth`, and the profile it came from. */
export interface RegistrationAuth {
  readonly auth: ServerAuth;
  readonly credentialProfile?: string;
}

/** The profile a registration names, if any; refuses two names that disagree. */
function profileNameOf(registration: KubeObjectLike): string | undefined {
  const fromSpec = registration.spec?.credentialProfile;
  const fromAnnotation = registration.metadata?.annotations?.[CREDENTIAL_PROFILE_ANNOTATION];
  if (fromSpec !== undefined && (typeof fromSpec !== 'string' || fromSpec === '')) {
    throw new RegistrationError('spec.credentialProfile must be the name of a credential profile');
  }
  if (fromSpec !== undefined && fromAnnotation !== undefined && fromSpec !== fromAnnotation) {
    throw new RegistrationError(
      `spec.credentialProfile "${fromSpec}" and the annotation ${CREDENTIAL_PROFILE_ANNOTATION} "${fromAnnotation}" disagree: keep one`,
    );
  }
  const name = fromSpec ?? fromAnnotation;
  return name === '' ? undefined : name;
}

/** True when `url` is `base` or below it (same origin, path prefix at a segment boundary). */
function isUnder(url: URL, base: string): boolean {
  const root = new URL(base);
  const path = root.pathname.replace(/\/+$/, '');
  return (
    url.origin === root.origin && (url.pathname === path || url.pathname.startsWith(`${path}/`))
  );
}

/**
 * Decides the credential of a registration whose server URL is `url` (see the file comment);
 * throws a RegistrationError when the registration is refused.
 */
export async function registrationAuthOf(
  registration: KubeObjectLike,
  url: string,
  context: RegistrationAuthContext,
): Promise<RegistrationAuth> {
  if (registration.spec?.auth !== undefined) {
    throw new RegistrationError(
      `spec.auth is not accepted: a registration cannot choose its own credential settings. Remove spec.auth and name a credential profile your namespace may use (spec.credentialProfile or the annotation ${CREDENTIAL_PROFILE_ANNOTATION}); the broker's admins define them`,
      'AuthNotAllowed',
    );
  }
  const name = profileNameOf(registration);
  if (name === undefined) return { auth: BROKER_AUTH };
  const namespace = registration.metadata?.namespace ?? '';
  const profile = context.profiles.get(name);
  if (profile === undefined) {
    throw new RegistrationError(
      `credential profile "${name}" does not exist: ask the broker's admins which profiles namespace ${namespace} may use`,
      'ProfileNotFound',
    );
  }
  if (!profile.namespaces.has(namespace)) {
    throw new RegistrationError(
      `credential profile "${name}" may not be used from namespace ${namespace}: ask the broker's admins to add it to the profile's namespaces`,
      'ProfileNotAllowed',
    );
  }
  const target = new URL(url);
  if (profile.urls !== undefined) {
    if (!profile.urls.some(pattern => pattern.matches(target))) {
      throw new RegistrationError(
        `the server URL ${url} is not one credential profile "${name}" allows (${profile.urls.map(p => p.source).join(', ')})`,
        'UrlNotAllowed',
      );
    }
  } else if (profile.auth.mode === 'backstage') {
    const bases = await context.pluginBaseUrls(profile.auth.targetPluginId);
    if (!bases.some(base => isUnder(target, base))) {
      throw new RegistrationError(
        `credential profile "${name}" sends Backstage tokens on behalf of each caller for plugin ${profile.auth.targetPluginId}, so only to that plugin's own URL (${[...new Set(bases)].join(' or ')}); the server URL ${url} is not`,
        'UrlNotAllowed',
      );
    }
  }
  if (profile.clientSecretRef === undefined) {
    return { auth: profile.auth, credentialProfile: name };
  }
  const { namespace: secretNamespace, name: secretName, key } = profile.clientSecretRef;
  const clientSecret = await readSecretValue(
    secretNamespace,
    secretName,
    key,
    context.lookups,
  ).catch(error => {
    if (!(error instanceof RegistrationError)) throw error;
    throw new RegistrationError(
      `credential profile "${name}" cannot be used now: its client secret is unavailable (${error.message}); tell the broker's admins`,
      'ProfileUnavailable',
    );
  });
  return { auth: { ...profile.auth, clientSecret }, credentialProfile: name };
}
