import { mockServices } from '@backstage/backend-test-utils';
import {
  RawMcpBackend,
  startRawMcpBackend,
  startUnreachableServer,
} from '@internal/test-mcp-backends';
import { BackendSessionPool } from './BackendSessionPool';
import type { BackendEndpoint } from './backendTransport';

describe('BackendSessionPool (raw backend)', () => {
  let backend: RawMcpBackend;
  let endpoint: BackendEndpoint;
  let pool: BackendSessionPool;

  beforeEach(async () => {
    backend = await startRawMcpBackend();
    endpoint = {
      name: 'raw',
      url: backend.url,
      headers: { authorization: 'Bearer broker-secret' },
    };
    pool = new BackendSessionPool({ logger: mockServices.logger.mock(), requestTimeoutMs: 5_000 });
  });

  afterEach(async () => {
    await pool.closeAll();
    await backend.close();
  });

  it('creates exactly one backend session for concurrent first calls of a client session', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 5 }, () => pool.acquire('client-a', endpoint, { elicitation: {} })),
    );
    expect(new Set(sessions).size).toBe(1);
    expect(backend.requests.filter(r => r.method === 'initialize')).toHaveLength(1);
    expect(backend.sessionIds()).toEqual([sessions[0].sessionId]);
  });

  it('keeps separate backend sessions per client session', async () => {
    const a = await pool.acquire('client-a', endpoint, {});
    const b = await pool.acquire('client-b', endpoint, {});
    expect(a.sessionId).not.toBe(b.sessionId);
    expect(pool.backendsOf('client-a')).toEqual(['raw']);
  });

  it('uses the broker’s credentials and declares only the relayed client capabilities', async () => {
    const session = await pool.acquire('client-a', endpoint, {
      elicitation: { form: {} },
      sampling: {},
      roots: {},
      experimental: { notRelayed: {} },
    } as any);
    const init = backend.requests.find(r => r.method === 'initialize')!;
    expect(init.headers.authorization).toBe('Bearer broker-secret');
    expect(backend.capabilitiesOf(session.sessionId!)).toEqual({
      elicitation: { form: {} },
      sampling: {},
      roots: {},
    });
    const initialized = backend.requests.find(r => r.method === 'notifications/initialized')!;
    expect(initialized.sessionId).toBe(session.sessionId);
    expect(initialized.headers['mcp-protocol-version']).toBe(session.protocolVersion);
  });

  it('ends a client session’s backend sessions with DELETE', async () => {
    const a = await pool.acquire('client-a', endpoint, {});
    const b = await pool.acquire('client-b', endpoint, {});
    await pool.closeClientSession('client-a');
    expect(backend.deletedSessions).toEqual([a.sessionId]);
    expect(backend.sessionIds()).toEqual([b.sessionId]);
    expect(pool.backendsOf('client-a')).toEqual([]);
  });

  it('ends every session with a removed backend', async () => {
    await pool.acquire('client-a', endpoint, {});
    await pool.acquire('client-b', endpoint, {});
    await pool.closeBackend('raw');
    expect(backend.deletedSessions).toHaveLength(2);
    expect(pool.size()).toBe(0);
  });

  it('forgets a failed initialization so the next call retries', async () => {
    const nowhere = await startUnreachableServer();
    try {
      const dead: BackendEndpoint = { ...endpoint, url: nowhere.url };
      await expect(pool.acquire('client-a', dead, {})).rejects.toThrow(
        /MCP server "raw" is unreachable/,
      );
      expect(nowhere.connections()).toBeGreaterThan(0);
      expect(pool.size()).toBe(0);
      await expect(pool.acquire('client-a', endpoint, {})).resolves.toMatchObject({ endpoint });
    } finally {
      await nowhere.close();
    }
  });
});
