/**
 * The resource types this repository talks to: core Secrets and Namespaces
 * (with the defaulting and validation the real registry applies), and the
 * Kuadrant / Gateway API custom resources.
 */
import { FieldError, badRequest } from './statusErrors';
import { KubeObject, ResourceType, customResource } from './resources';

const CONFIG_KEY_RE = /^[-._a-zA-Z0-9]+$/;
const STANDARD_BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Index of the first byte Go's base64 decoder rejects, or -1 when valid. */
function illegalBase64Byte(value: string): number {
  if (STANDARD_BASE64_RE.test(value) && value.length % 4 === 0) return -1;
  const bad = value.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) return bad;
  return value.length - (value.length % 4 === 0 ? 1 : value.length % 4);
}

/**
 * Secret registry behaviour: `stringData` folded into base64 `data`, `data`
 * must be standard base64 (or the JSON decoder answers 400), config-key
 * names, default `type: Opaque`, `type` and immutable secrets cannot change.
 */
function prepareSecret(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (obj.data !== undefined && (typeof obj.data !== 'object' || obj.data === null)) {
    throw badRequest('Secret in version "v1" cannot be handled as a Secret: data must be a map');
  }
  for (const [key, value] of Object.entries<unknown>(obj.data ?? {})) {
    if (typeof value !== 'string') {
      throw badRequest(
        `Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal ${typeof value} into Go struct field Secret.data of type []uint8`,
      );
    }
    const bad = illegalBase64Byte(value);
    if (bad >= 0) {
      throw badRequest(
        `Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte ${bad}`,
      );
    }
    if (!CONFIG_KEY_RE.test(key)) {
      errors.push(configKeyError(`data[${key}]`, key));
    }
  }
  if (obj.stringData !== undefined) {
    const data: Record<string, string> = { ...(obj.data ?? {}) };
    for (const [key, value] of Object.entries<unknown>(obj.stringData)) {
      if (!CONFIG_KEY_RE.test(key)) errors.push(configKeyError(`stringData[${key}]`, key));
      data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    }
    obj.data = data;
    delete obj.stringData;
  }
  obj.type = obj.type ?? 'Opaque';
  if (old !== undefined) {
    if (obj.type !== old.type) {
      errors.push({
        type: 'FieldValueInvalid',
        field: 'type',
        value: obj.type,
        detail: 'field is immutable',
      });
    }
    if (old.immutable === true) {
      if (JSON.stringify(obj.data ?? {}) !== JSON.stringify(old.data ?? {})) {
        errors.push({
          type: 'FieldValueForbidden',
          field: 'data',
          detail: 'field is immutable when `immutable` is set',
        });
      }
      if (obj.immutable !== true) {
        errors.push({
          type: 'FieldValueForbidden',
          field: 'immutable',
          detail: 'field is immutable when `immutable` is set',
        });
      }
    }
  }
  return errors;
}

function configKeyError(field: string, key: string): FieldError {
  return {
    type: 'FieldValueInvalid',
    field,
    value: key,
    detail:
      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
  };
}

/** Namespace registry behaviour: phase Active, the `kubernetes` finalizer, the name label. */
function prepareNamespace(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  obj.metadata = obj.metadata ?? {};
  obj.metadata.labels = {
    ...(obj.metadata.labels ?? {}),
    'kubernetes.io/metadata.name': obj.metadata.name,
  };
  if (old === undefined) {
    obj.spec = { finalizers: ['kubernetes'], ...(obj.spec ?? {}) };
    obj.status = { phase: 'Active' };
  }
  return [];
}

/** core/v1 Secret. */
export const secretResource: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'secrets',
  singular: 'secret',
  kind: 'Secret',
  listKind: 'SecretList',
  namespaced: true,
  statusSubresource: false,
  builtIn: true,
  nameValidation: 'dns1123-subdomain',
  extraSelectableFields: ['type'],
  prepareForWrite: prepareSecret,
};

/** core/v1 Namespace (cluster-scoped). */
export const namespaceResource: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  singular: 'namespace',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  namespaced: false,
  statusSubresource: true,
  builtIn: true,
  nameValidation: 'dns1123-label',
  extraSelectableFields: ['status.phase'],
  shortNames: ['ns'],
  prepareForWrite: prepareNamespace,
};

/** core/v1 ConfigMap (no extra validation beyond object meta). */
export const configMapResource: ResourceType = {
  group: '',
  version: 'v1',
  plural: 'configmaps',
  singular: 'configmap',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  namespaced: true,
  statusSubresource: false,
  builtIn: true,
  nameValidation: 'dns1123-subdomain',
  extraSelectableFields: [],
  shortNames: ['cm'],
};

/**
 * Everything `startFakeKubeApiServer()` serves unless told otherwise: core
 * Secrets, Namespaces and ConfigMaps, the Kuadrant developer-portal kinds
 * (with status subresource), Gateway API HTTPRoutes, Kuadrant policies and
 * MCP server registrations and virtual servers.
 */
export function wellKnownResources(): ResourceType[] {
  return [
    secretResource,
    namespaceResource,
    configMapResource,
    customResource({
      group: 'devportal.kuadrant.io',
      version: 'v1alpha1',
      plural: 'apiproducts',
      kind: 'APIProduct',
      statusSubresource: true,
    }),
    customResource({
      group: 'devportal.kuadrant.io',
      version: 'v1alpha1',
      plural: 'apikeys',
      kind: 'APIKey',
      statusSubresource: true,
    }),
    customResource({
      group: 'gateway.networking.k8s.io',
      version: 'v1',
      plural: 'httproutes',
      kind: 'HTTPRoute',
      statusSubresource: true,
    }),
    customResource({
      group: 'extensions.kuadrant.io',
      version: 'v1alpha1',
      plural: 'planpolicies',
      kind: 'PlanPolicy',
      statusSubresource: true,
    }),
    customResource({
      group: 'kuadrant.io',
      version: 'v1',
      plural: 'authpolicies',
      kind: 'AuthPolicy',
      statusSubresource: true,
    }),
    customResource({
      group: 'kuadrant.io',
      version: 'v1',
      plural: 'ratelimitpolicies',
      kind: 'RateLimitPolicy',
      statusSubresource: true,
    }),
    customResource({
      group: 'mcp.kuadrant.io',
      version: 'v1alpha1',
      plural: 'mcpserverregistrations',
      kind: 'MCPServerRegistration',
      statusSubresource: true,
    }),
    customResource({
      group: 'mcp.kuadrant.io',
      version: 'v1alpha1',
      plural: 'mcpvirtualservers',
      kind: 'MCPVirtualServer',
      statusSubresource: true,
    }),
  ];
}
