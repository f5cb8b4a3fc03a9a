import * as k8s from '@kubernetes/client-node';
import { FakeKubeApiServer, startFakeKubeApiServer } from './index';
import { clientsFor, mergePatch } from './testClients';

const NS = 'mcp';
const registrations = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  plural: 'mcpserverregistrations',
} as const;
const PATH = `/apis/mcp.kuadrant.io/v1alpha1/namespaces/${NS}/mcpserverregistrations`;

function registration(name: string, labels?: Record<string, string>) {
  return {
    apiVersion: 'mcp.kuadrant.io/v1alpha1',
    kind: 'MCPServerRegistration',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { toolPrefix: `${name}_` },
  };
}

interface Seen {
  type: string;
  name?: string;
  resourceVersion?: string;
  object: any;
}

/** Opens a watch with the real client-node Watch and records what arrives. */
async function openWatch(
  watch: k8s.Watch,
  query: Record<string, string | number | boolean | undefined>,
) {
  const events: Seen[] = [];
  let resolveDone: (err: unknown) => void = () => {};
  const done = new Promise<unknown>(resolve => {
    resolveDone = resolve;
  });
  const controller = await watch.watch(
    PATH,
    query,
    (type, object) =>
      events.push({
        type,
        name: object?.metadata?.name,
        resourceVersion: object?.metadata?.resourceVersion,
        object,
      }),
    err => resolveDone(err),
  );
  return { events, done, controller };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 10));
  }
}

describe('watch streams consumed by client-node Watch and informers', () => {
  let fake: FakeKubeApiServer;
  let c: ReturnType<typeof clientsFor>;

  beforeEach(async () => {
    fake = await startFakeKubeApiServer({ namespaces: [NS], watchHistoryLimit: 50 });
    c = clientsFor(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  const create = (name: string, labels?: Record<string, string>) =>
    c.custom.createNamespacedCustomObject({
      ...registrations,
      namespace: NS,
      body: registration(name, labels),
    });
  const patch = (name: string, body: object) =>
    c.custom.patchNamespacedCustomObject(
      { ...registrations, namespace: NS, name, body },
      mergePatch(),
    );
  const remove = (name: string) =>
    c.custom.deleteNamespacedCustomObject({ ...registrations, namespace: NS, name });

  it('streams ADDED, MODIFIED and DELETED after a list resourceVersion, each with its new version', async () => {
    await create('before');
    const list = await c.custom.listNamespacedCustomObject({ ...registrations, namespace: NS });
    const w = await openWatch(c.watch, { resourceVersion: list.metadata.resourceVersion });
    await create('weather');
    await patch('weather', { spec: { toolPrefix: 'wx_' } });
    await remove('weather');
    await waitFor(() => w.events.length === 3, 'three events');
    w.controller.abort();

    expect(w.events.map(e => [e.type, e.name])).toEqual([
      ['ADDED', 'weather'],
      ['MODIFIED', 'weather'],
      ['DELETED', 'weather'],
    ]);
    const versions = w.events.map(e => Number(e.resourceVersion));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(3);
    expect(w.events[1].object.spec.toolPrefix).toBe('wx_');
    expect(String(versions[2])).toBe(fake.resourceVersion());
  });

  it('starts a watch without resourceVersion with synthetic ADDED events for what exists', async () => {
    await create('a');
    await create('b');
    const w = await openWatch(c.watch, {});
    await waitFor(() => w.events.length === 2, 'initial events');
    await create('c');
    await waitFor(() => w.events.length === 3, 'live event');
    w.controller.abort();
    expect(w.events.map(e => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'ADDED b', 'ADDED c']);
  });

  it('turns label changes into ADDED/DELETED for a label-selected watch', async () => {
    await create('r1', { gateway: 'internal' });
    const w = await openWatch(c.watch, {
      labelSelector: 'gateway=public',
      resourceVersion: fake.resourceVersion(),
    });
    await patch('r1', { metadata: { labels: { gateway: 'public' } } });
    await patch('r1', { spec: { toolPrefix: 'x_' } });
    await patch('r1', { metadata: { labels: { gateway: 'internal' } } });
    await create('r2', { gateway: 'internal' });
    // A matching object created last: its ADDED comes after anything r2 could have caused.
    await create('r3', { gateway: 'public' });
    await waitFor(() => w.events.length === 4, 'four events');
    w.controller.abort();
    expect(w.events.map(e => `${e.type} ${e.name}`)).toEqual([
      'ADDED r1',
      'MODIFIED r1',
      'DELETED r1',
      'ADDED r3',
    ]);
    // The DELETED carries the last matching content at the version of the change.
    expect(w.events[2].object.metadata.labels).toEqual({ gateway: 'public' });
    expect(w.events[2].resourceVersion).toBe(
      fake.getObject('mcp.kuadrant.io/v1alpha1', 'MCPServerRegistration', NS, 'r1')!.metadata
        .resourceVersion,
    );
  });

  it('answers a too-old resourceVersion with an ERROR event carrying 410 Expired, then ends the stream', async () => {
    await create('a');
    const old = fake.resourceVersion();
    await create('b');
    fake.compactHistory();
    const w = await openWatch(c.watch, { resourceVersion: old });
    expect(await w.done).toBeNull();
    expect(w.events).toHaveLength(1);
    expect(w.events[0].type).toBe('ERROR');
    expect(w.events[0].object).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: expect.stringMatching(/^too old resource version: \d+ \(\d+\)$/),
    });
  });

  it('keeps a bounded event history (watchHistoryLimit)', async () => {
    await fake.close();
    fake = await startFakeKubeApiServer({ namespaces: [NS], watchHistoryLimit: 2 });
    c = clientsFor(fake);
    const start = fake.resourceVersion();
    await create('a');
    await create('b');
    await create('c');
    const tooOld = await openWatch(c.watch, { resourceVersion: start });
    await tooOld.done;
    expect(tooOld.events.map(e => e.object.code)).toEqual([410]);
    const recent = await openWatch(c.watch, { resourceVersion: String(Number(start) + 1) });
    await waitFor(() => recent.events.length === 2, 'replayed events');
    recent.controller.abort();
    expect(recent.events.map(e => e.name)).toEqual(['b', 'c']);
  });

  it('drops a watch connection; resuming from the last seen version gives what was missed, without duplicates', async () => {
    const w = await openWatch(c.watch, { resourceVersion: fake.resourceVersion() });
    await create('a');
    await waitFor(() => w.events.length === 1, 'first event');
    expect(fake.activeWatches()).toHaveLength(1);

    expect(fake.dropWatches()).toBe(1);
    expect(await w.done).toBeInstanceOf(Error);
    expect(fake.activeWatches()).toHaveLength(0);

    await create('b');
    await patch('a', { spec: { toolPrefix: 'z_' } });
    const resumed = await openWatch(c.watch, { resourceVersion: w.events[0].resourceVersion });
    await waitFor(() => resumed.events.length === 2, 'missed events');
    await create('live'); // a live event after the replay: any duplicate would come before it
    await waitFor(() => resumed.events.length >= 3, 'the live event');
    resumed.controller.abort();
    expect(resumed.events.map(e => `${e.type} ${e.name}`)).toEqual([
      'ADDED b',
      'MODIFIED a',
      'ADDED live',
    ]);
  });

  it('ends a watch cleanly on a graceful drop, as the server-side watch timeout does', async () => {
    const w = await openWatch(c.watch, { resourceVersion: fake.resourceVersion() });
    await waitFor(() => fake.activeWatches().length === 1, 'watch open');
    fake.dropWatches({ graceful: true });
    expect(await w.done).toBeNull();

    const timed = await openWatch(c.watch, {
      resourceVersion: fake.resourceVersion(),
      timeoutSeconds: 1,
    });
    const started = Date.now();
    expect(await timed.done).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('sends BOOKMARK events only to watches that allow them', async () => {
    const withBookmarks = await openWatch(c.watch, {
      resourceVersion: fake.resourceVersion(),
      allowWatchBookmarks: true,
    });
    const without = await openWatch(c.watch, { resourceVersion: fake.resourceVersion() });
    await waitFor(() => fake.activeWatches().length === 2, 'both watches open');
    await create('a');
    expect(fake.sendBookmarks()).toBe(1);
    const bookmarkVersion = fake.resourceVersion();
    // An event after the bookmark on both streams: a bookmark would have arrived before it.
    await create('b');
    await waitFor(
      () => withBookmarks.events.length === 3 && without.events.length === 2,
      'the event after the bookmark',
    );
    withBookmarks.controller.abort();
    without.controller.abort();
    expect(withBookmarks.events.map(e => e.type)).toEqual(['ADDED', 'BOOKMARK', 'ADDED']);
    expect(withBookmarks.events[1].resourceVersion).toBe(bookmarkVersion);
    expect(without.events.map(e => e.type)).toEqual(['ADDED', 'ADDED']);
  });

  it('makes a client-node informer resume without duplicates, and re-list after 410 Gone', async () => {
    await create('a');
    const listFn = () =>
      c.custom.listNamespacedCustomObject({ ...registrations, namespace: NS }) as any;
    const informer = k8s.makeInformer(c.kc, PATH, listFn);
    const added: string[] = [];
    const deleted: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o: any) => added.push(o.metadata.name));
    informer.on('delete', (o: any) => deleted.push(o.metadata.name));
    informer.on('error', (e: unknown) => errors.push(e));
    await informer.start();
    try {
      await waitFor(() => fake.activeWatches().length === 1, 'informer watching');
      expect(added).toEqual(['a']);

      // A clean end (server timeout): the informer re-watches from its version, no re-list.
      fake.clearRequestLog();
      fake.dropWatches({ graceful: true });
      await waitFor(() => fake.activeWatches().length === 1, 'informer re-watching');
      expect(fake.requests({ verb: 'list' })).toHaveLength(0);
      expect(fake.requests({ verb: 'watch' })[0].query.resourceVersion).toBeDefined();
      expect(added).toEqual(['a']);

      // Its next watch is held back while history moves on and is compacted:
      // the watch then gets 410 and the informer re-lists.
      const held = fake.hold({ verb: 'watch' });
      fake.dropWatches({ graceful: true });
      await waitFor(() => held.hits === 1, 'the held watch request');
      await create('b');
      await remove('a');
      fake.compactHistory();
      held.release();
      await waitFor(() => fake.requests({ verb: 'list' }).length === 1, 're-list after 410', 5000);
      await waitFor(() => added.includes('b') && deleted.includes('a'), 'state from the re-list');
      await waitFor(() => fake.activeWatches().length === 1, 'watching again');
      await create('c');
      await waitFor(() => added.includes('c'), 'live event after re-list');
      expect(added).toEqual(['a', 'b', 'c']);
      expect(deleted).toEqual(['a']);
      // (stop() itself reports an AbortError, so errors are checked before it)
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
    }
  }, 15_000);

  it('stops a client-node informer with an error on a dropped connection (the caller must restart it)', async () => {
    let lists = 0;
    const listFn = () => {
      lists++;
      return c.custom.listNamespacedCustomObject({ ...registrations, namespace: NS }) as any;
    };
    const watches = jest.spyOn(k8s.Watch.prototype, 'watch');
    const informer = k8s.makeInformer(c.kc, PATH, listFn);
    const errors: unknown[] = [];
    informer.on('error', (e: unknown) => errors.push(e));
    await informer.start();
    try {
      await waitFor(() => fake.activeWatches().length === 1, 'informer watching');
      fake.dropWatches();
      await waitFor(() => errors.length === 1, 'informer error');
      // A restart would begin in the same handler that reported the error (a list or a watch
      // call before it returns); none was made.
      expect(lists).toBe(1);
      expect(watches).toHaveBeenCalledTimes(1);
      expect(fake.activeWatches()).toHaveLength(0);
    } finally {
      watches.mockRestore();
      await informer.stop();
    }
  });
});
