/**
 * The REST verbs on one resource type: request parsing (query parameters,
 * bodies, patch content types) and response shaping (List objects,
 * 201 on create), over {@link ObjectStore}, its {@link EventHistory} and
 * {@link WatchHub}.
 */
import type { ServerResponse } from 'node:http';
import type { EventHistory } from './EventHistory';
import { ObjectStore, DeleteOptions } from './ObjectStore';
import { WatchHub } from './WatchHub';
import { KubeRequestInfo } from './faults';
import { KubeObject, ResourceType, apiVersionOf } from './resources';
import {
  badRequest,
  expired,
  methodNotAllowed,
  resourceNotServed,
  unsupportedMediaType,
} from './statusErrors';
import { KubeStatusError } from './KubeStatusError';
import { parseFieldSelector, parseLabelSelector } from './selectors';
import {
  PATCH_CONTENT_TYPES,
  applyJsonPatch,
  applyMergePatch,
  parseJsonPatch,
  parseMergePatch,
} from './patch';

/** What a handler answers: a JSON body and status, or "the watch took over". */
export type HandlerResult = { status: number; body: unknown } | { streaming: true };

/** The dependencies of {@link handleResourceRequest}. */
export interface ResourceHandlerContext {
  store: ObjectStore;
  /** The store's change history (how far back a `continue` snapshot can be rebuilt). */
  history: EventHistory;
  watches: WatchHub;
}

function parseJsonBody(body: string): KubeObject {
  try {
    const parsed = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new Error('expected a JSON object');
    }
    return parsed;
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

function checkTypeMeta(rt: ResourceType, obj: KubeObject, body: string): void {
  if (rt.builtIn) {
    if (obj.kind !== undefined && obj.kind !== rt.kind) {
      throw badRequest(
        `the kind in the data (${obj.kind}) does not match the expected kind (${rt.kind})`,
      );
    }
  } else if (obj.kind === undefined || obj.kind === '') {
    throw badRequest(`Object 'Kind' is missing in '${body.slice(0, 512)}'`);
  } else if (obj.kind !== rt.kind) {
    throw badRequest(
      `the kind in the data (${obj.kind}) does not match the expected kind (${rt.kind})`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(rt)) {
    throw badRequest(
      `the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersionOf(rt)})`,
    );
  }
}

function dryRunOf(query: Record<string, string>): boolean {
  const v = query.dryRun;
  if (v === undefined || v === '') return false;
  if (v !== 'All') {
    throw badRequest(`Invalid dry run value: ${v}: supported values are "All"`);
  }
  return true;
}

/** Which objects a list, watch or deletecollection request means: its namespace and selectors. */
function selectorFilter(
  rt: ResourceType,
  namespace: string | undefined,
  labelSelector: string | undefined,
  fieldSelector: string | undefined,
) {
  return {
    namespace,
    labelSelector: labelSelector ? parseLabelSelector(labelSelector) : undefined,
    fieldSelector: fieldSelector
      ? parseFieldSelector(fieldSelector, [
          'metadata.name',
          'metadata.namespace',
          ...rt.extraSelectableFields,
        ])
      : undefined,
  };
}

function listObject(rt: ResourceType, items: KubeObject[], metadata: Record<string, unknown>) {
  return {
    kind: rt.listKind,
    apiVersion: apiVersionOf(rt),
    metadata,
    // Typed (built-in) lists carry no per-item type meta; unstructured (CR) lists do.
    items: rt.builtIn ? items.map(({ kind: _k, apiVersion: _a, ...rest }) => rest) : items,
  };
}

interface ContinueToken {
  v: 'meta.k8s.io/v1';
  rv: number;
  start: string;
}

function encodeContinue(rv: number, start: string): string {
  return Buffer.from(
    JSON.stringify({ v: 'meta.k8s.io/v1', rv, start } satisfies ContinueToken),
  ).toString('base64url');
}

function decodeContinue(token: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (parsed.v !== 'meta.k8s.io/v1' || typeof parsed.start !== 'string') throw new Error();
    return parsed;
  } catch {
    throw badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
}

/** Dispatches a resource request for an already-resolved resource type. */
export function handleResourceRequest(
  ctx: ResourceHandlerContext,
  rt: ResourceType,
  info: KubeRequestInfo,
  body: string,
  contentType: string,
  res: ServerResponse,
): HandlerResult {
  const { store } = ctx;
  const q = info.query;
  // Namespaces answer at /api/v1/namespaces/<name>: RequestInfo puts the name in both.
  const namespace = rt.namespaced ? info.namespace : '';
  const name = info.name;
  if (rt.namespaced && namespace === undefined) {
    // The cluster-wide path of a namespaced resource only lists and watches.
    if (name !== undefined) throw resourceNotServed();
    if (info.verb !== 'list' && info.verb !== 'watch') throw methodNotAllowed();
  }
  if (
    !rt.namespaced &&
    info.namespace !== undefined &&
    !(rt.group === '' && rt.plural === 'namespaces')
  ) {
    throw resourceNotServed();
  }
  if (info.subresource !== undefined) {
    if (info.subresource !== 'status' || !rt.statusSubresource) throw resourceNotServed();
    if (!['get', 'update', 'patch'].includes(info.verb!)) throw methodNotAllowed();
  }
  const ns = namespace ?? '';

  switch (info.verb) {
    case 'get':
      return { status: 200, body: store.get(rt, ns, name!) };

    case 'list': {
      const filter = selectorFilter(rt, namespace, q.labelSelector, q.fieldSelector);
      if (
        q.resourceVersionMatch === 'Exact' &&
        q.resourceVersion !== String(store.currentRevision())
      ) {
        // Only the latest state is kept, so an exact older snapshot is as gone as after compaction.
        throw expired('The resourceVersion for the provided list is too old.');
      }
      let items: KubeObject[];
      let revision = store.currentRevision();
      if (q.continue) {
        const token = decodeContinue(q.continue);
        if (token.rv < ctx.history.oldestWatchableRevision()) {
          throw expired(
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          );
        }
        // Every page of a list comes from the snapshot of its first page.
        revision = token.rv;
        items = store
          .listAt(rt, filter, token.rv)
          .filter(o => `${o.metadata!.namespace ?? ''}/${o.metadata!.name}` > token.start);
      } else {
        items = store.list(rt, filter);
      }
      const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
      const limit = q.limit !== undefined ? Number(q.limit) : 0;
      if (limit > 0 && items.length > limit) {
        const last = items[limit - 1];
        metadata.continue = encodeContinue(
          revision,
          `${last.metadata!.namespace ?? ''}/${last.metadata!.name}`,
        );
        metadata.remainingItemCount = items.length - limit;
        items = items.slice(0, limit);
      }
      return { status: 200, body: listObject(rt, items, metadata) };
    }

    case 'watch': {
      let fieldSelector = q.fieldSelector;
      if (name !== undefined) {
        // A watch on a single object is a field selector on its name.
        fieldSelector = [fieldSelector, `metadata.name=${name}`].filter(Boolean).join(',');
      }
      const request = {
        rt,
        filter: selectorFilter(rt, namespace, q.labelSelector, fieldSelector),
        resourceVersion: q.resourceVersion,
        allowBookmarks: q.allowWatchBookmarks === 'true',
        sendInitialEvents: q.sendInitialEvents === 'true',
        timeoutSeconds: q.timeoutSeconds !== undefined ? Number(q.timeoutSeconds) : undefined,
      };
      ctx.watches.open(request, res);
      return { streaming: true };
    }

    case 'create': {
      if (info.subresource !== undefined) throw methodNotAllowed();
      const obj = parseJsonBody(body);
      checkTypeMeta(rt, obj, body);
      return { status: 201, body: store.create(rt, ns, obj, dryRunOf(q)) };
    }

    case 'update': {
      const obj = parseJsonBody(body);
      checkTypeMeta(rt, obj, body);
      const subresource = info.subresource === 'status' ? 'status' : undefined;
      return {
        status: 200,
        body: store.update(rt, ns, name!, obj, { subresource, dryRun: dryRunOf(q) }),
      };
    }

    case 'patch': {
      const type = contentType.split(';')[0].trim().toLowerCase();
      const current = store.get(rt, ns, name!);
      let patched: unknown;
      if (
        type === PATCH_CONTENT_TYPES.merge ||
        (rt.builtIn && type === PATCH_CONTENT_TYPES.strategicMerge)
      ) {
        // Strategic merge on built-ins is treated as a merge patch (the fake
        // has no patch-strategy metadata); custom resources reject it as the real server does.
        patched = applyMergePatch(current, parseMergePatch(body));
      } else if (type === PATCH_CONTENT_TYPES.json) {
        patched = applyJsonPatch(current, parseJsonPatch(body));
      } else {
        throw unsupportedMediaType(type, [
          PATCH_CONTENT_TYPES.json,
          PATCH_CONTENT_TYPES.merge,
          PATCH_CONTENT_TYPES.apply,
          ...(rt.builtIn ? [PATCH_CONTENT_TYPES.strategicMerge] : []),
        ]);
      }
      const subresource = info.subresource === 'status' ? 'status' : undefined;
      return {
        status: 200,
        body: store.update(rt, ns, name!, patched as KubeObject, {
          subresource,
          dryRun: dryRunOf(q),
          viaPatch: true,
        }),
      };
    }

    case 'delete':
      return { status: 200, body: store.delete(rt, ns, name!, deleteOptions(body, q)) };

    case 'deletecollection': {
      const filter = selectorFilter(rt, namespace, q.labelSelector, q.fieldSelector);
      const options = deleteOptions(body, q);
      const deleted = store
        .list(rt, filter)
        .map(o => store.delete(rt, o.metadata!.namespace ?? '', o.metadata!.name, options));
      return {
        status: 200,
        body: listObject(rt, deleted, { resourceVersion: String(store.currentRevision()) }),
      };
    }

    default:
      throw methodNotAllowed();
  }
}

function deleteOptions(body: string, q: Record<string, string>): DeleteOptions {
  let parsed: any = {};
  if (body.trim() !== '') {
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }
  const policy: string | undefined =
    q.propagationPolicy ??
    parsed.propagationPolicy ??
    (q.orphanDependents === 'true' || parsed.orphanDependents === true ? 'Orphan' : undefined);
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw new KubeStatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      reason: 'Invalid',
      code: 422,
    });
  }
  return {
    preconditions: parsed.preconditions,
    propagationPolicy: policy as DeleteOptions['propagationPolicy'],
    dryRun: dryRunOf(q) || (Array.isArray(parsed.dryRun) && parsed.dryRun.includes('All')),
  };
}
