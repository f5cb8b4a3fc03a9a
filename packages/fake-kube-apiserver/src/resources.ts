/**
 * Resource types the fake serves: what discovery advertises and what the
 * storage layer needs to treat a kind the way kube-apiserver does (scope,
 * status subresource, built-in vs custom resource semantics).
 */
import { FieldError, badRequest } from './statusErrors';
import { NameValidation } from './validation';

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, any>;

/** One servable group/version/resource. */
export interface ResourceType {
  /** API group; `''` for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** Plural resource name used in paths, e.g. `apikeys`. */
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  /** Whether `/status` exists; main-resource writes then keep the stored status. */
  statusSubresource: boolean;
  /**
   * Built-in (typed) kinds differ from custom resources: list items omit
   * `kind`/`apiVersion`, a PUT without resourceVersion is allowed, strategic
   * merge patch is accepted, and `metadata.generation` is not tracked.
   */
  builtIn: boolean;
  nameValidation: NameValidation;
  /** Field selector fields beyond `metadata.name` / `metadata.namespace`. */
  extraSelectableFields: string[];
  shortNames?: string[];
  /**
   * Kind-specific defaulting and validation on every write (`old` is the
   * stored object on update). Returns field errors for a 422; may throw a
   * Status (e.g. 400 for undecodable data).
   */
  prepareForWrite?: (obj: KubeObject, old: KubeObject | undefined) => FieldError[];
}

/** The `apiVersion` string of a resource type (`v1` or `group/version`). */
export function apiVersionOf(rt: ResourceType): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}

/** Options for describing a custom resource by hand. */
export interface CustomResourceDefinitionInput {
  group: string;
  version: string;
  plural: string;
  kind: string;
  singular?: string;
  listKind?: string;
  namespaced?: boolean;
  statusSubresource?: boolean;
  shortNames?: string[];
  /** `spec.versions[].selectableFields` of the CRD (JSON paths like `.spec.owner`). */
  selectableFields?: string[];
}

/** Builds a {@link ResourceType} for a custom resource (CRD semantics). */
export function customResource(input: CustomResourceDefinitionInput): ResourceType {
  return {
    group: input.group,
    version: input.version,
    plural: input.plural,
    singular: input.singular ?? input.kind.toLowerCase(),
    kind: input.kind,
    listKind: input.listKind ?? `${input.kind}List`,
    namespaced: input.namespaced ?? true,
    statusSubresource: input.statusSubresource ?? false,
    builtIn: false,
    nameValidation: 'dns1123-subdomain',
    extraSelectableFields: (input.selectableFields ?? []).map(p => p.replace(/^\./, '')),
    shortNames: input.shortNames,
  };
}

/**
 * Reads a `apiextensions.k8s.io/v1` CustomResourceDefinition manifest into
 * resource types (one per served version), so a test can load the very CRD
 * YAML a repository ships in `deploy/`.
 */
export function resourcesFromCrd(crd: KubeObject): ResourceType[] {
  const spec = crd.spec ?? {};
  const names = spec.names ?? {};
  if (!spec.group || !names.plural || !names.kind) {
    throw badRequest(
      `CustomResourceDefinition ${crd.metadata?.name ?? ''} needs spec.group, spec.names.plural and spec.names.kind`,
    );
  }
  const versions: any[] = spec.versions ?? [];
  return versions
    .filter(v => v.served !== false)
    .map(v =>
      customResource({
        group: spec.group,
        version: v.name,
        plural: names.plural,
        kind: names.kind,
        singular: names.singular,
        listKind: names.listKind,
        namespaced: spec.scope !== 'Cluster',
        statusSubresource: v.subresources?.status !== undefined,
        shortNames: names.shortNames,
        selectableFields: (v.selectableFields ?? []).map((f: any) => f.jsonPath),
      }),
    );
}
