/**
 * A fake Kubernetes API server on loopback HTTP, for tests of code that uses
 * `@kubernetes/client-node`: the client talks real HTTP to it and meets
 * kube-apiserver's paths, Status errors, optimistic concurrency, status
 * subresources, garbage collection and watch streams, plus the faults a real
 * cluster produces (slow, 5xx, hung, dropped watches, 401/403). See README.md
 * for what is faithful and what is simplified.
 */
import http, { IncomingMessage, ServerResponse } from 'node:http';
import https from 'node:https';
import { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { EventHistory } from './EventHistory';
import { ObjectStore } from './ObjectStore';
import { WatchHub, ActiveWatchInfo } from './WatchHub';
import {
  FaultHandle,
  HeldRequests,
  KubeRequestInfo,
  RecordedRequest,
  RequestMatcher,
  matchesRequest,
} from './faults';
import { FaultRules } from './FaultRules';
import { resolveRequestInfo } from './requestInfo';
import { discoveryDocument } from './discovery';
import { handleResourceRequest } from './resourceHandlers';
import { applyManifests, parseManifests } from './manifests';
import { KubeObject, ResourceType } from './resources';
import { ResourceRegistry } from './ResourceRegistry';
import { wellKnownResources } from './wellKnownResources';
import { selfSignedCertificate } from './selfSignedCertificate';
import {
  conflict,
  forbidden,
  internalError,
  resourceNotServed,
  serviceUnavailable,
  tooManyRequests,
  unauthorized,
} from './statusErrors';
import { KubeStatus, KubeStatusError } from './KubeStatusError';

/** The request body limit of kube-apiserver (3 MiB). */
const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;
const DEFAULT_WATCH_HISTORY_LIMIT = 1000;
const DEFAULT_INITIAL_REVISION = 1000;
const DEFAULT_USER = 'system:serviceaccount:backstage:backstage';

/** Options of {@link startFakeKubeApiServer}. */
export interface FakeKubeApiServerOptions {
  /** Resource types to serve; default {@link wellKnownResources}. */
  resources?: ResourceType[];
  /** Bearer token the server accepts; default a random one. */
  token?: string;
  /** User name in 403 messages; default `system:serviceaccount:backstage:backstage`. */
  user?: string;
  /** Events kept for watch replay; older resourceVersions answer 410. Default 1000. */
  watchHistoryLimit?: number;
  /** Namespaces that exist from the start; default `default`, `kube-system`, `kube-public`. */
  namespaces?: string[];
  /** Whether creating into a missing namespace answers 404 (the NamespaceLifecycle admission plugin); default true. */
  requireNamespaces?: boolean;
  /** Clock for creation/deletion timestamps. */
  now?: () => Date;
  /**
   * Serve HTTPS with a fresh self-signed certificate that the kubeconfig
   * trusts through `certificate-authority-data` (default, like a real cluster).
   * `false` serves plain HTTP; the kubeconfig then sets
   * `insecure-skip-tls-verify: true`, without which client-node 1.x refuses
   * `http://` servers.
   */
  tls?: boolean;
}

/** Options of the fault controls. */
export interface FaultOptions {
  /** How many matching requests the fault affects; default 1 (delays and forbids: unlimited). */
  times?: number;
}

/** A running fake API server. */
export interface FakeKubeApiServer {
  /** Base URL, e.g. `https://127.0.0.1:41234`. */
  readonly url: string;
  /** PEM certificate the server presents (undefined with `tls: false`). */
  readonly caCertificate?: string;
  /** The bearer token it accepts. */
  readonly token: string;
  /**
   * A kubeconfig (YAML) with one cluster, user (bearer token) and context
   * (`fake`, default namespace `default`): `kc.loadFromString(fake.kubeConfigYaml)`.
   */
  readonly kubeConfigYaml: string;
  /** Writes {@link FakeKubeApiServer.kubeConfigYaml} to a temporary file and returns its path. */
  writeKubeConfigFile(): Promise<string>;

  /** Loads manifests (YAML text, a file path via `loadFile`, or objects). CRDs register their types. */
  load(manifests: string | KubeObject[]): KubeObject[];
  /** Loads a manifest file, e.g. `examples/toystore.yaml`. */
  loadFile(path: string): Promise<KubeObject[]>;
  /** Registers another resource type. */
  registerResource(rt: ResourceType): void;

  /** Reads an object as stored (no request, no log entry). */
  getObject(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): KubeObject | undefined;
  /** Lists objects as stored. */
  listObjects(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  /** The current cluster-wide resourceVersion. */
  resourceVersion(): string;

  /** Requests so far (method, path, query, verb, resource, status…), oldest first. */
  requests(matcher?: RequestMatcher): RecordedRequest[];
  clearRequestLog(): void;

  /** Answers the next matching requests with a Status of this code (500, 503, 429, 504, 401, 403, 409…). */
  failNext(
    matcher: RequestMatcher,
    code: number,
    options?: FaultOptions & { message?: string },
  ): FaultHandle;
  /** Delays matching responses by `ms` (default: every match until removed). */
  delay(matcher: RequestMatcher, ms: number, options?: FaultOptions): FaultHandle;
  /**
   * Holds the next matching requests (default: one) until `release()`, then serves them
   * normally: a test orders a request after what it does meanwhile, without a delay to guess.
   */
  hold(matcher: RequestMatcher, options?: FaultOptions): HeldRequests;
  /** Never answers the next matching requests (the client's timeout must fire). */
  hangNext(matcher: RequestMatcher, options?: FaultOptions): FaultHandle;
  /** Destroys the connection of the next matching requests without an answer. */
  resetNext(matcher: RequestMatcher, options?: FaultOptions): FaultHandle;
  /** Answers 403 Forbidden (RBAC wording) to matching requests until removed. */
  forbid(matcher: RequestMatcher, options?: FaultOptions): FaultHandle;
  clearFaults(): void;

  /** Open watch streams. */
  activeWatches(): ActiveWatchInfo[];
  /** Ends watch streams: dropped sockets by default, or a clean end with `graceful`. */
  dropWatches(options?: { graceful?: boolean; match?: (w: ActiveWatchInfo) => boolean }): number;
  /** Sends a BOOKMARK to watches opened with `allowWatchBookmarks=true`. */
  sendBookmarks(): number;
  /** Forgets watch history up to a resourceVersion (default: now), so older watches get 410. */
  compactHistory(upToResourceVersion?: string): void;

  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        reject(
          new KubeStatusError({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}`,
            reason: 'RequestEntityTooLarge',
            code: 413,
          }),
        );
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function sendStatus(res: ServerResponse, status: KubeStatus): void {
  const headers: Record<string, string> = {};
  if (status.details?.retryAfterSeconds !== undefined) {
    headers['Retry-After'] = String(status.details.retryAfterSeconds);
  }
  sendJson(res, status.code, status, headers);
}

function forbiddenFor(info: KubeRequestInfo, user: string): KubeStatusError {
  const resource = info.subresource
    ? `${info.resource}/${info.subresource}`
    : (info.resource ?? '');
  const where =
    info.namespace !== undefined ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
  return forbidden(
    { group: info.apiGroup ?? '', resource: info.resource ?? '' },
    info.name,
    `User "${user}" cannot ${info.verb} resource "${resource}" in API group "${info.apiGroup ?? ''}" ${where}`,
  );
}

function statusForCode(
  code: number,
  info: KubeRequestInfo,
  user: string,
  message?: string,
): KubeStatusError {
  switch (code) {
    case 401:
      return unauthorized();
    case 403:
      return forbiddenFor(info, user);
    case 409:
      return conflict(
        { group: info.apiGroup ?? '', resource: info.resource ?? '' },
        info.name ?? '',
        message ??
          'the object has been modified; please apply your changes to the latest version and try again',
      );
    case 429:
      return tooManyRequests(1);
    case 500:
      return internalError(message ?? 'injected fault');
    case 503:
      return serviceUnavailable(message ?? 'the server is currently unable to handle the request');
    case 504:
      return new KubeStatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          message ??
          'Timeout: request did not complete within requested timeout - context deadline exceeded',
        reason: 'Timeout',
        details: {},
        code: 504,
      });
    default:
      return new KubeStatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: message ?? `injected status ${code}`,
        code,
      });
  }
}

/** Starts a fake Kubernetes API server on 127.0.0.1 (a free port). */
export async function startFakeKubeApiServer(
  options: FakeKubeApiServerOptions = {},
): Promise<FakeKubeApiServer> {
  const token = options.token ?? randomBytes(24).toString('hex');
  const user = options.user ?? DEFAULT_USER;
  const registry = new ResourceRegistry();
  for (const rt of options.resources ?? wellKnownResources()) registry.register(rt);
  const history = new EventHistory({
    limit: options.watchHistoryLimit ?? DEFAULT_WATCH_HISTORY_LIMIT,
    initialRevision: DEFAULT_INITIAL_REVISION,
  });
  const store = new ObjectStore({
    registry,
    history,
    initialRevision: DEFAULT_INITIAL_REVISION,
    now: options.now ?? (() => new Date()),
    requireNamespaces: options.requireNamespaces ?? true,
  });
  const watches = new WatchHub(store, history);
  const handlerContext = { store, history, watches };
  const faults = new FaultRules();
  /** Releases of `hold` faults: close() lets held requests go (their sockets are closed). */
  const releaseOnClose = new Set<() => void>();
  const log: RecordedRequest[] = [];
  const hung = new Set<ServerResponse>();

  const nsType = registry.find('', 'v1', 'namespaces');
  if (nsType) {
    for (const name of options.namespaces ?? ['default', 'kube-system', 'kube-public']) {
      store.create(nsType, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  let serverAddress = '127.0.0.1:0';

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake-kube-apiserver');
    const info = resolveRequestInfo(req.method ?? 'GET', url);
    const contentType = req.headers['content-type'] ?? '';
    const entry: RecordedRequest = { ...info, status: 0, contentType: contentType || undefined };
    log.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
    });
    try {
      const body = req.method === 'GET' || req.method === 'HEAD' ? '' : await readBody(req);
      if (body !== '') entry.body = body;
      if (req.headers.authorization !== `Bearer ${token}`) throw unauthorized();

      const { delayMs, fault } = faults.take(info);
      if (delayMs > 0) await new Promise(resolve => setTimeout(resolve, delayMs).unref());
      if (fault?.type === 'hold') await fault.released;
      if (fault?.type === 'hang') {
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return;
      }
      if (fault?.type === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault?.type === 'forbid') throw forbiddenFor(info, user);
      if (fault?.type === 'status') throw statusForCode(fault.code, info, user, fault.message);

      if (!info.isResourceRequest) {
        const doc = discoveryDocument(registry, info.path, serverAddress);
        if (doc === undefined || req.method !== 'GET') {
          res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('404 page not found\n');
          return;
        }
        sendJson(res, 200, doc);
        return;
      }
      const rt = registry.find(info.apiGroup!, info.apiVersion!, info.resource ?? '');
      if (!rt) {
        if (registry.hasGroupVersion(info.apiGroup!, info.apiVersion!)) throw resourceNotServed();
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('404 page not found\n');
        return;
      }
      const result = handleResourceRequest(handlerContext, rt, info, body, contentType, res);
      if ('streaming' in result) {
        entry.status = res.statusCode;
        return;
      }
      sendJson(res, result.status, result.body);
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof KubeStatusError) sendStatus(res, e.status);
      else sendStatus(res, internalError((e as Error).message).status);
    }
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res);
  };
  const certificate = options.tls === false ? undefined : selfSignedCertificate();
  const server = certificate
    ? https.createServer({ cert: certificate.cert, key: certificate.key }, listener)
    : http.createServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  serverAddress = `127.0.0.1:${port}`;
  const url = `${certificate ? 'https' : 'http'}://127.0.0.1:${port}`;
  const kubeConfigYaml = yaml.dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'fake',
        cluster: certificate
          ? {
              server: url,
              'certificate-authority-data': Buffer.from(certificate.cert).toString('base64'),
            }
          : { server: url, 'insecure-skip-tls-verify': true },
      },
    ],
    users: [{ name: 'fake', user: { token } }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace: 'default' } }],
    'current-context': 'fake',
  });

  const load = (manifests: string | KubeObject[]) =>
    applyManifests(
      store,
      registry,
      typeof manifests === 'string' ? parseManifests(manifests) : manifests,
      { createNamespaces: true, defaultNamespace: 'default' },
    );
  const typeOf = (apiVersion: string, kind: string) => {
    const rt = registry.findByKind(apiVersion, kind);
    if (!rt) throw new Error(`no resource type registered for ${apiVersion} ${kind}`);
    return rt;
  };
  const addFault = (
    matcher: RequestMatcher,
    fault: Parameters<FaultRules['add']>[1],
    times: number,
  ) => faults.add(matcher, fault, times);

  return {
    url,
    caCertificate: certificate?.cert,
    token,
    kubeConfigYaml,
    async writeKubeConfigFile() {
      const dir = await mkdtemp(join(tmpdir(), 'fake-kube-'));
      const path = join(dir, 'kubeconfig.yaml');
      await writeFile(path, kubeConfigYaml, { mode: 0o600 });
      return path;
    },
    load,
    async loadFile(path) {
      return load(await readFile(path, 'utf8'));
    },
    registerResource(rt) {
      registry.register(rt);
    },
    getObject(apiVersion, kind, namespace, name) {
      const rt = typeOf(apiVersion, kind);
      return store.peek(rt, rt.namespaced ? namespace : '', name);
    },
    listObjects(apiVersion, kind, namespace) {
      return store.list(typeOf(apiVersion, kind), { namespace });
    },
    resourceVersion() {
      return String(store.currentRevision());
    },
    requests(matcher) {
      return log.filter(r => matchesRequest(matcher, r)).map(r => ({ ...r }));
    },
    clearRequestLog() {
      log.length = 0;
    },
    failNext(matcher, code, opts = {}) {
      return addFault(matcher, { type: 'status', code, message: opts.message }, opts.times ?? 1);
    },
    delay(matcher, ms, opts = {}) {
      return addFault(matcher, { type: 'delay', ms }, opts.times ?? Infinity);
    },
    hold(matcher, opts = {}) {
      let release!: () => void;
      const released = new Promise<void>(resolve => (release = resolve));
      releaseOnClose.add(release);
      const fault = addFault(matcher, { type: 'hold', released }, opts.times ?? 1);
      return {
        get hits() {
          return fault.hits;
        },
        remove: () => fault.remove(),
        release: () => {
          fault.remove();
          release();
        },
      };
    },
    hangNext(matcher, opts = {}) {
      return addFault(matcher, { type: 'hang' }, opts.times ?? 1);
    },
    resetNext(matcher, opts = {}) {
      return addFault(matcher, { type: 'reset' }, opts.times ?? 1);
    },
    forbid(matcher, opts = {}) {
      return addFault(matcher, { type: 'forbid' }, opts.times ?? Infinity);
    },
    clearFaults() {
      faults.clear();
    },
    activeWatches() {
      return watches.active();
    },
    dropWatches(opts) {
      return watches.drop(opts);
    },
    sendBookmarks() {
      return watches.sendBookmarks();
    },
    compactHistory(upTo) {
      history.compact(upTo === undefined ? undefined : Number(upTo));
    },
    async close() {
      for (const release of releaseOnClose) release();
      watches.close();
      for (const res of hung) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}
