/**
 * Watch streams as kube-apiserver's watch cache serves them: HTTP 200 with
 * one JSON event per line (`{"type":"ADDED","object":{…}}`), filtered by
 * namespace and selectors with the cache's transition rules (an object that
 * stops matching arrives as DELETED, one that starts matching as ADDED).
 *
 * - no resourceVersion or `0`: synthetic ADDED for the current objects, then live;
 * - `resourceVersion=N`: every change after N, then live; N older than the
 *   retained history gets an ERROR event carrying a 410 Expired Status and
 *   the stream ends (what informers react to with a re-list);
 * - BOOKMARK events only to watchers that sent `allowWatchBookmarks=true`,
 *   when the test calls `sendBookmarks()` (the real server sends them about
 *   once a minute);
 * - `timeoutSeconds` ends the stream cleanly, like the server's own timeout.
 */
import type { ServerResponse } from 'node:http';
import { KubeStatusError } from './KubeStatusError';
import type { EventHistory, StoreEvent } from './EventHistory';
import { ListFilter, ObjectStore } from './ObjectStore';
import { KubeObject, ResourceType, apiVersionOf } from './resources';

/** A watch request after parsing. */
export interface WatchRequest {
  rt: ResourceType;
  filter: ListFilter;
  resourceVersion?: string;
  allowBookmarks: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

/** What a test can see about an open watch. */
export interface ActiveWatchInfo {
  group: string;
  plural: string;
  namespace?: string;
  /** Last resourceVersion sent on this stream. */
  lastResourceVersion: number;
}

interface Watcher {
  request: WatchRequest;
  res: ServerResponse;
  lastSent: number;
  timer?: NodeJS.Timeout;
}

/** Fans store events out to open watch streams; see the file comment. */
export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: ObjectStore,
    private readonly history: EventHistory,
  ) {
    this.unsubscribe = history.subscribe(event => this.dispatch(event));
  }

  /** Starts a watch on an HTTP response (headers not yet sent). */
  open(request: WatchRequest, res: ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const watcher: Watcher = { request, res, lastSent: this.store.currentRevision() };
    const rv = request.resourceVersion;
    if (rv === undefined || rv === '' || rv === '0') {
      for (const obj of this.store.list(request.rt, request.filter)) {
        this.write(watcher, 'ADDED', obj);
      }
      watcher.lastSent = this.store.currentRevision();
      if (request.sendInitialEvents && request.allowBookmarks) {
        this.writeBookmark(watcher, { 'k8s.io/initial-events-end': 'true' });
      }
    } else {
      const from = Number(rv);
      if (!Number.isInteger(from) || from < 0) {
        this.writeError(
          watcher,
          new KubeStatusError({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `Invalid value: "${rv}": resourceVersion must be an integer`,
            reason: 'BadRequest',
            code: 400,
          }),
        );
        return;
      }
      let backlog: StoreEvent[];
      try {
        backlog = this.history.eventsSince(from);
      } catch (e) {
        this.writeError(watcher, e as KubeStatusError);
        return;
      }
      watcher.lastSent = from;
      for (const event of backlog) this.deliver(watcher, event);
      watcher.lastSent = Math.max(from, this.store.currentRevision());
    }
    this.watchers.add(watcher);
    res.on('close', () => this.forget(watcher));
    if (request.timeoutSeconds !== undefined && request.timeoutSeconds > 0) {
      watcher.timer = setTimeout(() => this.end(watcher, true), request.timeoutSeconds * 1000);
      watcher.timer.unref();
    }
  }

  /** Open watches, for assertions ("the broker is watching"). */
  active(): ActiveWatchInfo[] {
    return [...this.watchers].map(w => ({
      group: w.request.rt.group,
      plural: w.request.rt.plural,
      namespace: w.request.filter.namespace,
      lastResourceVersion: w.lastSent,
    }));
  }

  /** Sends a BOOKMARK at the current revision to watchers that allow them. */
  sendBookmarks(): number {
    let sent = 0;
    for (const w of this.watchers) {
      if (!w.request.allowBookmarks) continue;
      w.lastSent = this.store.currentRevision();
      this.writeBookmark(w);
      sent++;
    }
    return sent;
  }

  /**
   * Ends matching watches: `graceful` finishes the chunked response (as the
   * server's watch timeout does); otherwise the socket is destroyed (a
   * dropped connection, which clients see as an error).
   */
  drop(options: { graceful?: boolean; match?: (w: ActiveWatchInfo) => boolean } = {}): number {
    let dropped = 0;
    for (const w of [...this.watchers]) {
      const info = {
        group: w.request.rt.group,
        plural: w.request.rt.plural,
        namespace: w.request.filter.namespace,
        lastResourceVersion: w.lastSent,
      };
      if (options.match && !options.match(info)) continue;
      this.end(w, options.graceful ?? false);
      dropped++;
    }
    return dropped;
  }

  /** Ends every watch and stops listening to the store. */
  close(): void {
    this.drop({ graceful: true });
    this.unsubscribe();
  }

  private end(w: Watcher, graceful: boolean): void {
    this.forget(w);
    if (graceful) w.res.end();
    else w.res.socket?.destroy();
  }

  private forget(w: Watcher): void {
    if (w.timer) clearTimeout(w.timer);
    this.watchers.delete(w);
  }

  private dispatch(event: StoreEvent): void {
    for (const w of this.watchers) this.deliver(w, event);
  }

  private deliver(w: Watcher, event: StoreEvent): void {
    const { rt, filter } = w.request;
    if (event.group !== rt.group || event.plural !== rt.plural) return;
    if (event.resourceVersion <= w.lastSent) return;
    const now = this.store.matches(rt, event.object, filter);
    const before =
      event.previous !== undefined && event.type === 'MODIFIED'
        ? this.store.matches(rt, event.previous, filter)
        : false;
    const object = { ...event.object, apiVersion: apiVersionOf(rt), kind: rt.kind };
    w.lastSent = event.resourceVersion;
    if (event.type === 'MODIFIED') {
      if (now && before) this.write(w, 'MODIFIED', object);
      else if (now) this.write(w, 'ADDED', object);
      else if (before) {
        // The watch cache sends the previous content at the new version.
        const previous = structuredClone(event.previous!);
        previous.metadata!.resourceVersion = String(event.resourceVersion);
        this.write(w, 'DELETED', { ...previous, apiVersion: apiVersionOf(rt), kind: rt.kind });
      }
    } else if (now) {
      this.write(w, event.type, object);
    }
  }

  private write(w: Watcher, type: string, object: KubeObject): void {
    w.res.write(`${JSON.stringify({ type, object })}\n`);
  }

  private writeBookmark(w: Watcher, annotations?: Record<string, string>): void {
    this.write(w, 'BOOKMARK', {
      kind: w.request.rt.kind,
      apiVersion: apiVersionOf(w.request.rt),
      metadata: {
        resourceVersion: String(w.lastSent),
        ...(annotations ? { annotations } : {}),
      },
    });
  }

  private writeError(w: Watcher, error: KubeStatusError): void {
    w.res.write(`${JSON.stringify({ type: 'ERROR', object: error.status })}\n`);
    w.res.end();
  }
}
