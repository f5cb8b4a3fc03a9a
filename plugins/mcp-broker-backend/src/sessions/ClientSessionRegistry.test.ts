/*
 * Two registries over one store behave as two broker replicas: sessions are recognised on
 * both, end everywhere, expire by TTL unless in use, and shutting one replica down leaves the
 * records for the other. (The store is the in-memory one; the database stores pass the same
 * store contract in store/sharedStores.test.ts, and the real replicas are tested end to end in
 * packages/backend/src/e2e/brokerReplicas.test.ts.)
 */
import type { ClientEventStream } from '../types';
import { ClientSessionRegistry } from './ClientSessionRegistry';
import { MemoryClientSessionStore } from './ClientSessionStore';

const TTL_MS = 10_000;
const ALICE = 'user:default/alice';

function replicas() {
  let now = 1_000_000;
  const store = new MemoryClientSessionStore();
  const ended: Array<[string, string]> = [];
  const make = (name: string) =>
    new ClientSessionRegistry({
      store,
      ttlMs: TTL_MS,
      now: () => now,
      onEnded: async id => {
        ended.push([name, id]);
      },
    });
  return {
    a: make('a'),
    b: make('b'),
    store,
    ended,
    advance: (ms: number) => (now += ms),
    now: () => now,
  };
}

const init = {
  principal: ALICE,
  protocolVersion: '2025-06-18',
  clientCapabilities: { elicitation: {} },
  clientInfo: { name: 'c' },
};

function openStream(): ClientEventStream {
  const controller = new AbortController();
  return {
    send: () => true,
    close: () => controller.abort(),
    get closed() {
      return controller.signal.aborted;
    },
    signal: controller.signal,
  };
}

describe('ClientSessionRegistry across replicas', () => {
  it('recognises a session on a replica that did not create it, with its protocol version and capabilities', async () => {
    const { a, b } = replicas();
    const created = await a.create(init);
    const seen = await b.get(created.id, ALICE);
    expect(seen).toMatchObject({
      id: created.id,
      principal: ALICE,
      protocolVersion: '2025-06-18',
      clientCapabilities: { elicitation: {} },
    });
    expect(b.size).toBe(1);
  });

  it('treats another principal like an unknown id', async () => {
    const { a, b } = replicas();
    const created = await a.create(init);
    expect(await b.get(created.id, 'user:default/bob')).toBeUndefined();
    expect(await b.get('nope', ALICE)).toBeUndefined();
    expect(await a.get(created.id, ALICE)).toBeDefined();
  });

  it('ends a session everywhere: the other replica drops its half at the next sweep and releases it once', async () => {
    const { a, b, ended } = replicas();
    const created = await a.create(init);
    const onB = (await b.get(created.id, ALICE))!;
    onB.eventStream = openStream();
    await a.end(created.id);
    expect(ended).toEqual([['a', created.id]]);
    expect(await b.sweep()).toEqual([created.id]);
    expect(onB.ended.signal.aborted).toBe(true);
    expect(onB.eventStream.closed).toBe(true);
    expect(ended).toEqual([
      ['a', created.id],
      ['b', created.id],
    ]);
    expect(await b.get(created.id, ALICE)).toBeUndefined();
  });

  it('expires an unused session after its TTL and sweeps the record away', async () => {
    const { a, b, store, advance, now } = replicas();
    const created = await a.create(init);
    advance(TTL_MS);
    expect(await b.get(created.id, ALICE)).toBeUndefined();
    expect(await a.sweep()).toEqual([created.id]);
    expect(a.size).toBe(0);
    expect(await store.deleteExpired(now())).toBe(0); // the sweep removed it already
  });

  it('keeps a session alive while it is used on any replica, or holds a stream or a running request', async () => {
    const { a, b, advance } = replicas();
    const used = await a.create(init);
    const streaming = await a.create(init);
    const calling = await a.create(init);
    streaming.eventStream = openStream();
    calling.openRequests = 1;
    for (let i = 0; i < 5; i++) {
      advance(TTL_MS / 2);
      expect(await b.get(used.id, ALICE)).toBeDefined();
      await a.sweep();
    }
    expect(await b.get(streaming.id, ALICE)).toBeDefined();
    expect(await b.get(calling.id, ALICE)).toBeDefined();
  });

  it('tells when a session has no running request left, or has ended', async () => {
    const { a, b } = replicas();
    const idle = await a.create(init);
    await expect(a.whenIdle(idle.id)).resolves.toBeUndefined();
    await expect(a.whenIdle('not-a-session')).resolves.toBeUndefined();
    const busy = await a.create(init);
    a.requestStarted(busy);
    a.requestStarted(busy);
    let woken = false;
    const waiting = a.whenIdle(busy.id).then(() => {
      woken = true;
    });
    a.requestEnded(busy);
    await Promise.resolve();
    expect(woken).toBe(false);
    a.requestEnded(busy);
    await waiting;
    expect(woken).toBe(true);
    // A session that ends while busy wakes its waiters too.
    const ending = await a.create(init);
    a.requestStarted(ending);
    const ended = a.whenIdle(ending.id);
    await b.end(ending.id);
    await a.sweep();
    await expect(ended).resolves.toBeUndefined();
  });

  it('shutting one replica down keeps the sessions for the others and releases nothing shared', async () => {
    const { a, b, ended } = replicas();
    const created = await a.create(init);
    a.closeLocal();
    expect(ended).toEqual([]);
    expect(await b.get(created.id, ALICE)).toBeDefined();
  });
});

describe('ClientSessionRegistry limits with a shared store (two replicas over one store)', () => {
  function sharedReplicas(limits: { perPrincipal: number; perReplica: number }) {
    let now = 1_000_000;
    const store = new MemoryClientSessionStore();
    const released: string[] = [];
    const make = () =>
      new ClientSessionRegistry({
        store,
        ttlMs: TTL_MS,
        now: () => (now += 1),
        limits,
        sharedStore: true,
        onReleased: async id => {
          released.push(id);
        },
      });
    return { a: make(), b: make(), released };
  }

  it('refuses a principal at its limit on any replica instead of ending a session another replica may be using', async () => {
    const { a, b } = sharedReplicas({ perPrincipal: 2, perReplica: 100 });
    const first = await a.create(init);
    await b.create(init);
    await expect(b.create(init)).rejects.toThrow(
      /at most 2 at once \(mcpBroker\.sessionLimits\.perPrincipal\)/,
    );
    expect(await a.get(first.id, ALICE)).toBeDefined();
    await expect(a.create({ ...init, principal: 'user:default/bob' })).resolves.toBeDefined();
  });

  it('makes room on a full replica by releasing only the local half of its oldest idle session', async () => {
    const { a, b, released } = sharedReplicas({ perPrincipal: 10, perReplica: 2 });
    const oldest = await a.create(init);
    const busy = await a.create(init);
    busy.eventStream = openStream();
    await a.create(init);
    expect(released).toEqual([oldest.id]);
    expect(a.size).toBe(2);
    // The session goes on: the other replica, and this one, still serve it.
    expect(await b.get(oldest.id, ALICE)).toBeDefined();
    await expect(a.get(oldest.id, ALICE)).resolves.toBeDefined();
    // Full of sessions in use: nothing to release.
    for (const session of [busy, (await a.get(oldest.id, ALICE))!])
      session.eventStream = openStream();
    await expect(a.create(init)).rejects.toThrow(
      /maximum of 2 sessions \(mcpBroker\.sessionLimits\.perReplica\)/,
    );
  });
});
