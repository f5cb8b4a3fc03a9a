/*
 * An MCPServerRegistration (mcp.kuadrant.io/v1alpha1, the kind Kuadrant's mcp-gateway uses) as a
 * broker server entry. Field names follow Kuadrant's CRD: spec.targetRef (an HTTPRoute),
 * spec.path (default /mcp), spec.toolPrefix, spec.credentialRef {name, key (default "token")}:
 * the broker's own credential for the server, from a Secret of the registration's namespace.
 * The broker adds what Kuadrant's CRD does not have: the annotation
 * `devportal.kuadrant.io/mcp-server-url`, which names the URL directly, and the credential
 * profile a person's calls use (spec.credentialProfile or an annotation; registrationAuth.ts).
 * Annotations survive a CRD that prunes unknown spec fields.
 */
import { isValidServerName, isValidToolPrefix, type BrokerServerConfig } from '../config';
import { derivedNameOf } from './derivedNameOf';
import { readSecretValue } from './readSecretValue';
import { registrationAuthOf, type RegistrationAuthContext } from './registrationAuth';
import { RegistrationError, type KubeObjectLike } from './registrationTypes';

/** Annotation with an explicit server URL (instead of resolving the HTTPRoute). */
export const SERVER_URL_ANNOTATION = 'devportal.kuadrant.io/mcp-server-url';

/** What resolving a registration needs: cluster reads, route settings, the admin's profiles. */
export interface RegistrationContext extends RegistrationAuthContext {
  /** How an HTTPRoute hostname becomes a URL (`mcpBroker.kubernetes.routes`). */
  readonly routes: { readonly scheme: 'http' | 'https'; readonly port?: number };
}

/**
 * Builds the server entry of a registration, reading its HTTPRoute and Secrets; throws a
 * RegistrationError (with the reason) when the registration is refused.
 */
export async function resolveRegistration(
  registration: KubeObjectLike,
  context: RegistrationContext,
): Promise<BrokerServerConfig> {
  const { lookups, routes } = context;
  const namespace = registration.metadata?.namespace ?? '';
  const resourceName = registration.metadata?.name ?? '';
  const spec = registration.spec ?? {};
  const name = derivedNameOf(namespace, resourceName);
  if (!isValidServerName(name))
    throw new RegistrationError(`cannot derive a server name from ${namespace}/${resourceName}`);

  const toolPrefix = typeof spec.toolPrefix === 'string' ? spec.toolPrefix : `${name}_`;
  if (!isValidToolPrefix(toolPrefix)) {
    throw new RegistrationError(
      `spec.toolPrefix "${toolPrefix}" must use letters, digits, "_", "." or "-"`,
    );
  }
  const url = await urlOf(registration, namespace, spec, lookups, routes);
  const headers: Record<string, string> = {};
  if (spec.credentialRef !== undefined) {
    headers.Authorization = await credentialOf(namespace, spec.credentialRef, lookups);
  }
  const { auth, credentialProfile } = await registrationAuthOf(registration, url, context);
  return {
    name,
    url,
    toolPrefix,
    headers,
    source: {
      type: 'kubernetes',
      namespace,
      name: resourceName,
      ...(registration.metadata?.uid === undefined ? {} : { uid: registration.metadata.uid }),
      ...(credentialProfile === undefined ? {} : { credentialProfile }),
    },
    ...(auth.mode === 'broker' ? {} : { auth }),
  };
}

async function urlOf(
  registration: KubeObjectLike,
  namespace: string,
  spec: any,
  lookups: RegistrationContext['lookups'],
  routes: RegistrationContext['routes'],
): Promise<string> {
  const explicit = registration.metadata?.annotations?.[SERVER_URL_ANNOTATION];
  if (explicit !== undefined) return checkedUrl(explicit, `annotation ${SERVER_URL_ANNOTATION}`);
  const ref = spec.targetRef;
  if (typeof ref?.name !== 'string' || ref.name === '') {
    throw new RegistrationError('spec.targetRef.name is required (an HTTPRoute)');
  }
  if (
    (ref.kind ?? 'HTTPRoute') !== 'HTTPRoute' ||
    (ref.group ?? 'gateway.networking.k8s.io') !== 'gateway.networking.k8s.io'
  ) {
    throw new RegistrationError('spec.targetRef must be a gateway.networking.k8s.io HTTPRoute');
  }
  const routeNamespace =
    typeof ref.namespace === 'string' && ref.namespace !== '' ? ref.namespace : namespace;
  const route = await lookups.httpRoute(routeNamespace, ref.name);
  if (!route) throw new RegistrationError(`HTTPRoute ${routeNamespace}/${ref.name} not found`);
  const hostname = route.spec?.hostnames?.[0];
  if (typeof hostname !== 'string' || hostname === '' || hostname.includes('*')) {
    throw new RegistrationError(
      `HTTPRoute ${routeNamespace}/${ref.name} has no usable (non-wildcard) hostname`,
    );
  }
  const path = typeof spec.path === 'string' && spec.path !== '' ? spec.path : '/mcp';
  const port = routes.port !== undefined ? `:${routes.port}` : '';
  return checkedUrl(
    `${routes.scheme}://${hostname}${port}${path.startsWith('/') ? path : `/${path}`}`,
    'the HTTPRoute',
  );
}

function checkedUrl(raw: string, from: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RegistrationError(`${from} gives "${raw}", which is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RegistrationError(`${from} gives a URL that is not http or https`);
  }
  if (url.username !== '' || url.password !== '') {
    // Never echoed: user information in a URL is a credential.
    throw new RegistrationError(
      `${from} gives a URL with user information: put the credential in a Secret (spec.credentialRef)`,
    );
  }
  return url.toString();
}

/**
 * The Authorization header value from the referenced Secret: sent as is when it already has a
 * scheme ("Bearer …", "Basic …"), else as a bearer token. Error messages name the Secret and
 * key, never the value.
 */
async function credentialOf(
  namespace: string,
  ref: any,
  lookups: RegistrationContext['lookups'],
): Promise<string> {
  if (typeof ref?.name !== 'string' || ref.name === '') {
    throw new RegistrationError('spec.credentialRef.name is required when credentialRef is set');
  }
  const key = typeof ref.key === 'string' && ref.key !== '' ? ref.key : 'token';
  const value = await readSecretValue(namespace, ref.name, key, lookups);
  return /^[A-Za-z][A-Za-z0-9_-]* \S/.test(value) ? value : `Bearer ${value}`;
}
