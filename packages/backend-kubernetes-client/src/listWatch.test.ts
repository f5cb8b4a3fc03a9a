/*
 * runListWatch against the fake Kubernetes API server (no cluster runs here; the real
 * @kubernetes/client-node talks to it over HTTPS): list then watch, resume after a dropped
 * watch without a re-list, re-list on 410, retry after a failed list, stop.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { FakeKubeApiServer, startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import { loadKubernetesClient } from './loadKubernetesClient';
import { runListWatch, type WatchedObject } from './listWatch';

const NS = 'mcp';
const resource = {
  group: 'mcp.kuadrant.io',
  version: 'v1alpha1',
  plural: 'mcpserverregistrations',
  kind: 'MCPServerRegistration',
};

function registration(name: string) {
  return {
    apiVersion: 'mcp.kuadrant.io/v1alpha1',
    kind: 'MCPServerRegistration',
    metadata: { name, namespace: NS },
    spec: { targetRef: { name: 'route' } },
  };
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 10));
  }
}

describe('runListWatch (fake Kubernetes API server, real client-node)', () => {
  let fake: FakeKubeApiServer;
  let stop: AbortController;
  let loop: Promise<void>;
  const logger = mockServices.logger.mock();
  const log: string[] = [];
  /** A delay policy that retries at once, so a retry needs no wall-clock wait. */
  const backoff = { nextDelayMs: jest.fn(() => 0), reset: jest.fn() };

  const lists = () => log.filter(line => line.startsWith('list'));
  const start = async () => {
    const kubeconfig = await fake.writeKubeConfigFile();
    const { lib, kubeConfig } = loadKubernetesClient(
      { type: 'kubeconfig', path: kubeconfig },
      'test.kubernetes',
    );
    loop = runListWatch({
      lib,
      kubeConfig,
      resource,
      namespace: NS,
      requestTimeoutMs: 5_000,
      backoff,
      logger,
      signal: stop.signal,
      onList: (items: WatchedObject[]) =>
        log.push(`list ${items.map(i => i.metadata?.name).join(',')}`),
      onEvent: (type, object) => log.push(`${type} ${object.metadata?.name}`),
    });
  };
  const watches = () => fake.requests({ verb: 'watch' });

  beforeAll(() => {
    // The first load of client-node (an ES module through require) takes seconds under Jest.
    require('@kubernetes/client-node');
  }, 30_000);

  beforeEach(async () => {
    fake = await startFakeKubeApiServer({ namespaces: [NS] });
    fake.load([registration('a')]);
    stop = new AbortController();
    log.length = 0;
    jest.clearAllMocks();
  });

  afterEach(async () => {
    stop.abort();
    await loop;
    await fake.close();
  });

  it('lists, then delivers every change in order from the list resourceVersion', async () => {
    await start();
    await waitFor(() => fake.activeWatches().length === 1, 'the watch');
    expect(watches()[0].query.resourceVersion).toBe(fake.resourceVersion());
    fake.load([registration('b')]);
    fake.load([{ ...registration('b'), spec: { targetRef: { name: 'other' } } }]);
    await waitFor(() => log.length === 3, 'two events');
    expect(log).toEqual(['list a', 'ADDED b', 'MODIFIED b']);
    expect(watches()[0].query.allowWatchBookmarks).toBe('true');
  });

  it('resumes a dropped watch from the last resourceVersion without listing again', async () => {
    await start();
    await waitFor(() => fake.activeWatches().length === 1, 'the watch');
    fake.load([registration('b')]);
    await waitFor(() => log.includes('ADDED b'), 'ADDED b');
    const seen = fake.resourceVersion();
    fake.dropWatches();
    await waitFor(() => watches().length === 2 && fake.activeWatches().length === 1, 'a new watch');
    expect(watches()[1].query.resourceVersion).toBe(seen);
    fake.load([registration('c')]);
    await waitFor(() => log.includes('ADDED c'), 'ADDED c');
    expect(lists()).toEqual(['list a']);
  });

  it('lists again when the watch answers 410 Gone, and says so in the log', async () => {
    await start();
    await waitFor(() => fake.activeWatches().length === 1, 'the watch');
    // b and c happen while no watch is open, and the history that holds them is forgotten.
    fake.dropWatches({ graceful: true });
    fake.load([registration('b'), registration('c')]);
    fake.compactHistory();
    await waitFor(() => lists().length === 2, 'the second list');
    expect(lists()).toEqual(['list a', 'list a,b,c']);
    expect(log.filter(line => line.startsWith('ADDED'))).toEqual([]);
    expect(logger.info).toHaveBeenCalledWith(
      'MCPServerRegistration watch (namespace mcp): resourceVersion expired (410), re-listing',
    );
  });

  it('retries a failed list after the backoff delay, logging status and reason only', async () => {
    fake.failNext({ verb: 'list' }, 500, { message: 'etcd is on fire' });
    await start();
    await waitFor(() => lists().length === 1, 'the list after the retry');
    expect(backoff.nextDelayMs).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringMatching(
        new RegExp(
          '^MCPServerRegistration list/watch \\(namespace mcp\\) failed: HTTP 500 \\w+; ' +
            'retrying in 0 ms$',
        ),
      ),
    );
    expect(JSON.stringify(logger.warn.mock.calls)).not.toContain('etcd is on fire');
  });

  it('ends when the signal aborts, closing the watch, and calls nothing afterwards', async () => {
    await start();
    await waitFor(() => fake.activeWatches().length === 1, 'the watch');
    stop.abort();
    await loop;
    await waitFor(() => fake.activeWatches().length === 0, 'the watch to close');
    const before = log.length;
    fake.load([registration('late')]); // no watch is open to carry it
    expect(fake.activeWatches()).toEqual([]);
    expect(log.length).toBe(before);
    expect(fake.requests({ verb: ['list', 'watch'] }).length).toBe(2);
  });
});
