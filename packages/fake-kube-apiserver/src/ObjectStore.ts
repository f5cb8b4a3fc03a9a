/**
 * Storage with the semantics of kube-apiserver's generic registry over etcd:
 *
 * - one cluster-wide revision counter; every write gets the next value as its
 *   `metadata.resourceVersion`, lists report the current revision;
 * - compare-and-set on resourceVersion for update, patch and delete
 *   preconditions (409 Conflict with the real wording); a write that changes
 *   nothing is not stored and bumps nothing (etcd3 `GuaranteedUpdate`);
 * - server-owned metadata (uid, creationTimestamp, generation,
 *   deletionTimestamp) cannot be set by clients;
 * - kinds with a status subresource: main-resource writes keep the stored
 *   status (create drops it), `/status` writes change only status;
 * - finalizers hold a deleted object (deletionTimestamp set) until removed;
 * - garbage collection of ownerReference dependents. The real collector is a
 *   controller that deletes dependents asynchronously after the owner is gone;
 *   here it runs synchronously right after the owner's delete, so a test sees
 *   the owner's DELETED event followed by its dependents' (deterministic).
 *
 * Every change is appended to the {@link EventHistory} (EventHistory.ts): the
 * bounded history that watches replay from and that hands each change to them.
 */
import { randomUUID } from 'node:crypto';
import {
  FieldError,
  GroupResource,
  OPTIMISTIC_LOCK_MESSAGE,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  unknownServerError,
} from './statusErrors';
import { KubeStatusError } from './KubeStatusError';
import { EventHistory, StoreEvent } from './EventHistory';
import { deepEqual } from './patch';
import { FieldSelector, LabelSelector } from './selectors';
import { KubeObject, ResourceType, apiVersionOf } from './resources';
import { ResourceRegistry } from './ResourceRegistry';
import { validateObjectMeta } from './validation';

/** Filters for list and deletecollection. */
export interface ListFilter {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
}

/** `DeleteOptions` the fake honours. */
export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  dryRun?: boolean;
}

/** Options of {@link ObjectStore}. */
export interface ObjectStoreOptions {
  registry: ResourceRegistry;
  /** Where every committed change is appended (what watches replay and hear). */
  history: EventHistory;
  initialRevision: number;
  now: () => Date;
  /** Whether creating into a namespace that does not exist answers 404 (NamespaceLifecycle). */
  requireNamespaces: boolean;
}

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATE_NAME_ATTEMPTS = 8;

function groupResource(rt: ResourceType): GroupResource {
  return { group: rt.group, resource: rt.plural };
}

function timestamp(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * etcd's key order: byte order of `<namespace>/<name>` (not the locale's), which is also
 * the order `continue` resumes in.
 */
function byKeyOrder(items: KubeObject[]): KubeObject[] {
  return items.sort((a, b) => {
    const left = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
    const right = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
    if (left === right) return 0;
    return left < right ? -1 : 1;
  });
}

function withoutVersion(obj: KubeObject): KubeObject {
  const copy = structuredClone(obj);
  delete copy.metadata.resourceVersion;
  return copy;
}

/** In-memory object storage shared by every resource type; see the file comment. */
export class ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private revision: number;

  constructor(private readonly options: ObjectStoreOptions) {
    this.revision = options.initialRevision;
  }

  /** The current cluster-wide revision (what a list reports). */
  currentRevision(): number {
    return this.revision;
  }

  private key(rt: ResourceType, namespace: string, name: string): string {
    return `${rt.group}/${rt.plural}/${rt.namespaced ? namespace : ''}/${name}`;
  }

  private render(rt: ResourceType, stored: KubeObject): KubeObject {
    // Every served version shares one storage; the object is answered in the
    // version that was asked for (no schema conversion).
    return { ...structuredClone(stored), apiVersion: apiVersionOf(rt), kind: rt.kind };
  }

  /** Objects of a type, sorted by namespace/name like etcd keys. */
  list(rt: ResourceType, filter: ListFilter): KubeObject[] {
    const prefix = `${rt.group}/${rt.plural}/`;
    const items: KubeObject[] = [];
    for (const [key, obj] of this.objects) {
      if (!key.startsWith(prefix)) continue;
      if (!this.matches(rt, obj, filter)) continue;
      items.push(this.render(rt, obj));
    }
    return byKeyOrder(items);
  }

  /**
   * Objects of a type as they were at `revision`, sorted like {@link ObjectStore.list}:
   * the snapshot a `continue` token reads, as the API server serves every page of a list
   * from the revision of its first page. Rebuilt from the current objects by undoing the
   * history after `revision` (each event keeps the object before the change); the caller
   * answers 410 first when that history was compacted.
   */
  listAt(rt: ResourceType, filter: ListFilter, revision: number): KubeObject[] {
    const prefix = `${rt.group}/${rt.plural}/`;
    const state = new Map<string, KubeObject>();
    for (const [key, obj] of this.objects) {
      if (key.startsWith(prefix)) state.set(key, obj);
    }
    for (const event of this.options.history.newestFirstAfter(revision)) {
      if (event.group !== rt.group || event.plural !== rt.plural) continue;
      const key = this.key(rt, event.namespace, event.object.metadata!.name!);
      if (event.previous === undefined) {
        state.delete(key);
      } else {
        state.set(key, event.previous);
      }
    }
    return byKeyOrder(
      [...state.values()]
        .filter(obj => this.matches(rt, obj, filter))
        .map(obj => this.render(rt, obj)),
    );
  }

  /** Whether an object passes namespace, label and field filters. */
  matches(rt: ResourceType, obj: KubeObject, filter: ListFilter): boolean {
    if (
      filter.namespace !== undefined &&
      rt.namespaced &&
      obj.metadata?.namespace !== filter.namespace
    ) {
      return false;
    }
    if (filter.labelSelector && !filter.labelSelector.matches(obj.metadata?.labels)) return false;
    if (filter.fieldSelector && !filter.fieldSelector.matches(selectableFields(rt, obj)))
      return false;
    return true;
  }

  /** One object or 404. */
  get(rt: ResourceType, namespace: string, name: string): KubeObject {
    const obj = this.objects.get(this.key(rt, namespace, name));
    if (!obj) throw notFound(groupResource(rt), name);
    return this.render(rt, obj);
  }

  private findStored(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(this.key(rt, namespace, name));
  }

  /** POST semantics. `namespace` is the one from the URL ('' when cluster-scoped). */
  create(rt: ResourceType, namespace: string, body: KubeObject, dryRun = false): KubeObject {
    const obj = structuredClone(body);
    obj.metadata = obj.metadata ?? {};
    const meta = obj.metadata;
    if (rt.namespaced) {
      if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw unknownServerError('resourceVersion should not be set on objects to be created');
    }
    delete meta.resourceVersion;
    const generateName =
      (meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string';

    // BeforeCreate: server-owned fields, kind-specific defaulting.
    meta.uid = randomUUID();
    meta.creationTimestamp = timestamp(this.options.now());
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    if (rt.builtIn) delete meta.generation;
    else meta.generation = 1;
    if (rt.statusSubresource && !rt.builtIn) delete obj.status;
    obj.apiVersion = apiVersionOf(rt);
    obj.kind = rt.kind;

    for (let attempt = 0; ; attempt++) {
      if (generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
      const errors = [
        ...validateObjectMeta(meta, rt.nameValidation),
        ...(rt.prepareForWrite?.(obj, undefined) ?? []),
      ];
      if (errors.length > 0) {
        throw invalid({ group: rt.group, kind: rt.kind }, meta.name ?? '', errors);
      }
      if (rt.namespaced && this.options.requireNamespaces && !this.namespaceExists(namespace)) {
        throw notFound({ group: '', resource: 'namespaces' }, namespace);
      }
      const key = this.key(rt, namespace, meta.name);
      if (this.objects.has(key)) {
        if (generateName && attempt < GENERATE_NAME_ATTEMPTS) continue;
        throw alreadyExists(groupResource(rt), meta.name);
      }
      if (dryRun) return this.render(rt, obj);
      meta.resourceVersion = String(++this.revision);
      this.objects.set(key, obj);
      this.emit({ type: 'ADDED', rt, object: obj });
      return this.render(rt, obj);
    }
  }

  private namespaceExists(namespace: string): boolean {
    return this.objects.has(`/namespaces//${namespace}`);
  }

  /**
   * PUT semantics (and the second half of PATCH): `proposed` replaces the
   * stored object, subject to the resourceVersion precondition it carries.
   */
  update(
    rt: ResourceType,
    namespace: string,
    name: string,
    proposed: KubeObject,
    opts: { subresource?: 'status'; dryRun?: boolean; viaPatch?: boolean } = {},
  ): KubeObject {
    if (typeof proposed !== 'object' || proposed === null || Array.isArray(proposed)) {
      throw badRequest('the body of the request must be a JSON object');
    }
    const key = this.key(rt, namespace, name);
    const current = this.objects.get(key);
    const gr = groupResource(rt);
    if (!current) throw notFound(gr, name);
    const next = structuredClone(proposed);
    next.metadata = next.metadata ?? {};
    const meta = next.metadata;
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(
        `the name of the object (${meta.name}) does not match the name on the URL (${name})`,
      );
    }
    if (
      rt.namespaced &&
      meta.namespace !== undefined &&
      meta.namespace !== '' &&
      meta.namespace !== namespace
    ) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    const requestedVersion: string | undefined = meta.resourceVersion;
    if (requestedVersion === undefined || requestedVersion === '') {
      // Custom resources refuse unconditional updates (AllowUnconditionalUpdate
      // is false for CRDs); a patch without a version is applied to the latest.
      if (!rt.builtIn && !opts.viaPatch) {
        throw invalid({ group: rt.group, kind: rt.kind }, name, [
          {
            type: 'FieldValueInvalid',
            field: 'metadata.resourceVersion',
            value: 0,
            detail: 'must be specified for an update',
          },
        ]);
      }
    } else if (requestedVersion !== current.metadata!.resourceVersion) {
      throw conflict(gr, name, OPTIMISTIC_LOCK_MESSAGE);
    }
    if (meta.uid !== undefined && meta.uid !== '' && meta.uid !== current.metadata!.uid) {
      throw invalid({ group: rt.group, kind: rt.kind }, name, [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.uid',
          value: meta.uid,
          detail: 'field is immutable',
        },
      ]);
    }

    let candidate: KubeObject;
    if (opts.subresource === 'status') {
      // statusStrategy.PrepareForUpdate: everything but status comes from the stored object.
      candidate = structuredClone(current);
      if ('status' in next) candidate.status = next.status;
      else delete candidate.status;
    } else {
      candidate = next;
      if (rt.statusSubresource) {
        if (current.status === undefined) delete candidate.status;
        else candidate.status = structuredClone(current.status);
      }
      const cm = current.metadata!;
      meta.name = name;
      if (rt.namespaced) meta.namespace = namespace;
      else delete meta.namespace;
      meta.uid = cm.uid;
      meta.creationTimestamp = cm.creationTimestamp;
      if (cm.generation !== undefined) meta.generation = cm.generation;
      else delete meta.generation;
      if (cm.deletionTimestamp !== undefined) {
        meta.deletionTimestamp = cm.deletionTimestamp;
        meta.deletionGracePeriodSeconds = cm.deletionGracePeriodSeconds;
        const added = (meta.finalizers ?? []).filter(
          (f: string) => !(cm.finalizers ?? []).includes(f),
        );
        if (added.length > 0) {
          throw invalid({ group: rt.group, kind: rt.kind }, name, [
            {
              type: 'FieldValueForbidden',
              field: 'metadata.finalizers',
              detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f: string) => JSON.stringify(f)).join(', ')}}`,
            },
          ]);
        }
      } else {
        delete meta.deletionTimestamp;
        delete meta.deletionGracePeriodSeconds;
      }
      delete meta.managedFields;
      delete meta.generateName;
      if (cm.generateName !== undefined) meta.generateName = cm.generateName;
    }
    candidate.apiVersion = current.apiVersion;
    candidate.kind = current.kind;
    candidate.metadata!.resourceVersion = current.metadata!.resourceVersion;

    const errors: FieldError[] = [
      ...validateObjectMeta(candidate.metadata!, rt.nameValidation),
      ...(rt.prepareForWrite?.(candidate, current) ?? []),
    ];
    if (errors.length > 0) throw invalid({ group: rt.group, kind: rt.kind }, name, errors);

    if (!rt.builtIn && opts.subresource !== 'status' && specChanged(rt, candidate, current)) {
      candidate.metadata!.generation = (current.metadata!.generation ?? 0) + 1;
    }
    if (deepEqual(withoutVersion(candidate), withoutVersion(current))) {
      // etcd3 GuaranteedUpdate skips writing identical bytes: no new version, no event.
      return this.render(rt, current);
    }
    if (opts.dryRun) return this.render(rt, candidate);
    candidate.metadata!.resourceVersion = String(++this.revision);
    this.objects.set(key, candidate);
    this.emit({ type: 'MODIFIED', rt, object: candidate, previous: current });
    if (
      candidate.metadata!.deletionTimestamp !== undefined &&
      (candidate.metadata!.finalizers ?? []).length === 0
    ) {
      // The last finalizer went away: the object is deleted now.
      this.remove(rt, key, candidate, 'Background');
    }
    return this.render(rt, candidate);
  }

  /** DELETE semantics: preconditions, finalizers, then garbage collection. */
  delete(
    rt: ResourceType,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): KubeObject {
    const key = this.key(rt, namespace, name);
    const current = this.objects.get(key);
    const gr = groupResource(rt);
    if (!current) throw notFound(gr, name);
    const pre = options.preconditions ?? {};
    const storageKey = `/registry/${rt.group === '' ? '' : `${rt.group}/`}${rt.plural}/${rt.namespaced ? `${namespace}/` : ''}${name}`;
    const preconditionFailed = (what: string, wanted: string, actual: string) =>
      conflict(
        gr,
        name,
        `StorageError: invalid object, Code: 4, Key: ${storageKey}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what} in precondition: ${wanted}, ${what} in object meta: ${actual}`,
      );
    if (pre.uid !== undefined && pre.uid !== current.metadata!.uid) {
      throw preconditionFailed('UID', pre.uid, current.metadata!.uid);
    }
    if (
      pre.resourceVersion !== undefined &&
      pre.resourceVersion !== current.metadata!.resourceVersion
    ) {
      throw preconditionFailed(
        'ResourceVersion',
        pre.resourceVersion,
        current.metadata!.resourceVersion,
      );
    }
    if (options.dryRun) return this.render(rt, current);
    const finalizers: string[] = current.metadata!.finalizers ?? [];
    if (finalizers.length > 0) {
      if (current.metadata!.deletionTimestamp !== undefined) return this.render(rt, current);
      const marked = structuredClone(current);
      marked.metadata!.deletionTimestamp = timestamp(this.options.now());
      marked.metadata!.deletionGracePeriodSeconds = 0;
      marked.metadata!.resourceVersion = String(++this.revision);
      this.objects.set(key, marked);
      this.emit({ type: 'MODIFIED', rt, object: marked, previous: current });
      return this.render(rt, marked);
    }
    if (rt.group === '' && rt.plural === 'namespaces') this.emptyNamespace(name);
    this.remove(rt, key, current, options.propagationPolicy ?? 'Background');
    return this.render(rt, current);
  }

  /**
   * Simplified namespace deletion: the real namespace goes Terminating while
   * the namespace controller deletes its content; here the content goes at once.
   */
  private emptyNamespace(namespace: string): void {
    for (const key of [...this.objects.keys()]) {
      const obj = this.objects.get(key);
      if (!obj || obj.metadata?.namespace !== namespace) continue;
      const rt = this.typeOfKey(key);
      if (rt?.namespaced) this.remove(rt, key, obj, 'Background');
    }
  }

  private typeOfKey(key: string): ResourceType | undefined {
    const [group, plural] = key.split('/');
    return this.options.registry.findByGroupResource(group, plural)[0];
  }

  private remove(
    rt: ResourceType,
    key: string,
    current: KubeObject,
    policy: DeleteOptions['propagationPolicy'],
  ): void {
    this.objects.delete(key);
    const tombstone = structuredClone(current);
    tombstone.metadata!.resourceVersion = String(++this.revision);
    this.emit({ type: 'DELETED', rt, object: tombstone, previous: current });
    this.collectGarbage(current.metadata!.uid, policy);
  }

  /**
   * What the garbage collector would do once an owner is gone: dependents
   * whose every owner is gone are deleted (Background/Foreground); dependents
   * with owners left, or with policy Orphan, lose the dangling reference.
   */
  private collectGarbage(ownerUid: string, policy: DeleteOptions['propagationPolicy']): void {
    for (const key of [...this.objects.keys()]) {
      // Re-read: an earlier cascade step may have changed or removed it.
      const obj = this.objects.get(key);
      const refs: any[] = obj?.metadata?.ownerReferences ?? [];
      if (!obj || !refs.some(r => r.uid === ownerUid)) continue;
      const rt = this.typeOfKey(key);
      if (!rt) continue;
      const remaining = refs.filter(r => r.uid !== ownerUid && this.uidExists(r.uid));
      if (policy === 'Orphan' || remaining.length > 0) {
        const updated = structuredClone(obj);
        updated.metadata!.ownerReferences = refs.filter(r => r.uid !== ownerUid);
        if (updated.metadata!.ownerReferences.length === 0)
          delete updated.metadata!.ownerReferences;
        updated.metadata!.resourceVersion = String(++this.revision);
        this.objects.set(key, updated);
        this.emit({ type: 'MODIFIED', rt, object: updated, previous: obj });
      } else {
        this.delete(rt, obj.metadata!.namespace ?? '', obj.metadata!.name, {
          propagationPolicy: 'Background',
          preconditions: { uid: obj.metadata!.uid },
        });
      }
    }
  }

  private uidExists(uid: string): boolean {
    for (const obj of this.objects.values()) if (obj.metadata?.uid === uid) return true;
    return false;
  }

  private emit(change: {
    type: StoreEvent['type'];
    rt: ResourceType;
    object: KubeObject;
    previous?: KubeObject;
  }): void {
    const event: StoreEvent = {
      type: change.type,
      resourceVersion: Number(change.object.metadata!.resourceVersion),
      group: change.rt.group,
      plural: change.rt.plural,
      namespace: change.object.metadata?.namespace ?? '',
      object: structuredClone(change.object),
      previous: change.previous ? structuredClone(change.previous) : undefined,
    };
    this.options.history.append(event);
  }

  /** A stored object by kind, for seeding and inspection. */
  peek(rt: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const obj = this.findStored(rt, namespace, name);
    return obj ? this.render(rt, obj) : undefined;
  }
}

/** Errors thrown by the store are Status errors; re-exported for callers' instanceof checks. */
export { KubeStatusError };

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) {
    s += GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)];
  }
  return s;
}

function specChanged(rt: ResourceType, a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const { metadata: _m, status: _s, ...rest } = o;
    return rt.statusSubresource ? rest : { ...rest, status: _s };
  };
  return !deepEqual(strip(a), strip(b));
}

/** The values a field selector can test for an object. */
export function selectableFields(rt: ResourceType, obj: KubeObject): Record<string, string> {
  const fields: Record<string, string> = {
    'metadata.name': obj.metadata?.name ?? '',
    'metadata.namespace': obj.metadata?.namespace ?? '',
  };
  for (const path of rt.extraSelectableFields) {
    let v: any = obj;
    for (const part of path.split('.')) v = v?.[part];
    fields[path] = v === undefined || v === null ? '' : String(v);
  }
  return fields;
}
