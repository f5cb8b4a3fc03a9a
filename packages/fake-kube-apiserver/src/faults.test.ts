import * as k8s from '@kubernetes/client-node';
import { FakeKubeApiServer, startFakeKubeApiServer } from './index';
import { clientsFor, statusOf } from './testClients';

/**
 * Per-call options giving one request its own timeout: client-node 1.4 has
 * none by default, and per-call middleware must be Observable-style (a
 * Promise-returning `pre` fails with "toPromise is not a function").
 */
function withTimeout(ms: number): k8s.ConfigurationOptions<k8s.ObservableMiddleware> {
  return {
    middleware: [
      {
        pre: ctx => {
          ctx.setSignal(AbortSignal.timeout(ms));
          return new k8s.Observable(Promise.resolve(ctx));
        },
        post: res => new k8s.Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

describe('auth and fault injection, seen through client-node', () => {
  let fake: FakeKubeApiServer;
  let c: ReturnType<typeof clientsFor>;

  beforeEach(async () => {
    fake = await startFakeKubeApiServer();
    c = clientsFor(fake);
    await c.core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 's1' } },
    });
  });
  afterEach(async () => {
    await fake.close();
  });

  it('answers 401 to a wrong bearer token', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(fake.kubeConfigYaml.replace(fake.token, 'wrong-token'));
    const { code } = await statusOf(
      kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: 'default' }),
    );
    expect(code).toBe(401);
    expect(fake.requests({ verb: 'list' }).map(r => r.status)).toEqual([401]);
  });

  it('answers 403 with RBAC wording for a forbidden verb and resource, until removed', async () => {
    const rule = fake.forbid({ verb: 'list', resource: 'secrets' });
    const { code, body } = await statusOf(c.core.listNamespacedSecret({ namespace: 'default' }));
    expect(code).toBe(403);
    expect(body).toMatchObject({
      reason: 'Forbidden',
      message:
        'secrets is forbidden: User "system:serviceaccount:backstage:backstage" cannot list resource "secrets" in API group "" in the namespace "default"',
      details: { kind: 'secrets' },
    });
    await expect(
      c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }),
    ).resolves.toBeDefined();
    expect(rule.hits).toBe(1);
    rule.remove();
    await expect(c.core.listNamespacedSecret({ namespace: 'default' })).resolves.toBeDefined();
  });

  it('fails the next N matching requests with 503, then recovers', async () => {
    fake.failNext({ verb: 'get', resource: 'secrets' }, 503, { times: 2 });
    const first = await statusOf(c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }));
    const second = await statusOf(
      c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }),
    );
    expect([first.code, second.code]).toEqual([503, 503]);
    expect(first.body.reason).toBe('ServiceUnavailable');
    await expect(
      c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }),
    ).resolves.toBeDefined();
  });

  it('answers 500 InternalError with the message given', async () => {
    fake.failNext(r => r.method === 'POST', 500, { message: 'etcdserver: request timed out' });
    const { code, body } = await statusOf(
      c.core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's2' } } }),
    );
    expect(code).toBe(500);
    expect(body).toMatchObject({
      reason: 'InternalError',
      message: 'Internal error occurred: etcdserver: request timed out',
    });
    expect(fake.getObject('v1', 'Secret', 'default', 's2')).toBeUndefined();
  });

  it('delays matching responses', async () => {
    const delay = fake.delay({ resource: 'secrets' }, 300, { times: 1 });
    const started = Date.now();
    await c.core.readNamespacedSecret({ namespace: 'default', name: 's1' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await c.core.readNamespacedSecret({ namespace: 'default', name: 's1' });
    expect(delay.hits).toBe(1); // the second read was not delayed
  });

  it('holds the next matching request until released, then serves it normally', async () => {
    const held = fake.hold({ resource: 'secrets', verb: 'get' });
    let firstAnswered = false;
    const first = c.core
      .readNamespacedSecret({ namespace: 'default', name: 's1' })
      .finally(() => (firstAnswered = true));
    while (held.hits === 0) await new Promise(resolve => setTimeout(resolve, 5));
    // The next read is not held: it is answered while the first one waits.
    await c.core.readNamespacedSecret({ namespace: 'default', name: 's1' });
    expect(firstAnswered).toBe(false);
    held.release();
    expect((await first).metadata?.name).toBe('s1');
    expect(held.hits).toBe(1);
  });

  it('hangs a request until the client gives up (a client-side timeout must exist)', async () => {
    const hang = fake.hangNext({ verb: 'get' });
    // Never answered: only the client's own timeout ends the call.
    await expect(
      c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }, withTimeout(200)),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(hang.hits).toBe(1);
    await expect(
      c.core.readNamespacedSecret({ namespace: 'default', name: 's1' }, withTimeout(2000)),
    ).resolves.toBeDefined();
  });

  it('resets the connection of a matching request', async () => {
    fake.resetNext({ verb: 'list' });
    await expect(c.core.listNamespacedSecret({ namespace: 'default' })).rejects.toMatchObject({
      name: 'FetchError',
    });
    expect(fake.requests({ verb: 'list' })[0].status).toBe(0);
  });
});
