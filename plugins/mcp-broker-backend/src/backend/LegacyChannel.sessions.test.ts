/*
 * The clients' backend sessions of LegacyChannel (one per owner: a client session or a stateless
 * caller's pool key) against the raw test backend, which records every request.
 */
import {
  RawMcpBackend,
  startRawMcpBackend,
  startUnreachableServer,
} from '@internal/test-mcp-backends';
import type { BackendEndpoint } from './backendTransport';
import { HttpBackendTransport } from './HttpBackendTransport';
import { LegacyChannel } from './LegacyChannel';

describe('LegacyChannel: the clients’ backend sessions (raw backend)', () => {
  let backend: RawMcpBackend;
  let endpoint: BackendEndpoint;
  let pool: LegacyChannel;
  const channelOf = (target: BackendEndpoint) =>
    new LegacyChannel(target, HttpBackendTransport.shared, 5_000);

  beforeEach(async () => {
    backend = await startRawMcpBackend();
    endpoint = {
      name: 'raw',
      url: backend.url,
      headers: { authorization: 'Bearer broker-secret' },
    };
    pool = channelOf(endpoint);
  });

  afterEach(async () => {
    await pool.closeSessions();
    await backend.close();
  });

  it('creates exactly one backend session for concurrent first calls of a client session', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 5 }, () => pool.sessionFor('client-a', { elicitation: {} })),
    );
    expect(new Set(sessions).size).toBe(1);
    expect(backend.requests.filter(r => r.method === 'initialize')).toHaveLength(1);
    expect(backend.sessionIds()).toEqual([sessions[0].id]);
  });

  it('keeps separate backend sessions per client session', async () => {
    const a = await pool.sessionFor('client-a', {});
    const b = await pool.sessionFor('client-b', {});
    expect(a.id).not.toBe(b.id);
    expect(pool.hasSessionOf('client-a')).toBe(true);
  });

  it('uses the broker’s credentials and declares only the relayed client capabilities', async () => {
    const session = await pool.sessionFor('client-a', {
      elicitation: { form: {} },
      sampling: {},
      roots: {},
      experimental: { notRelayed: {} },
    } as any);
    const init = backend.requests.find(r => r.method === 'initialize')!;
    expect(init.headers.authorization).toBe('Bearer broker-secret');
    expect(backend.capabilitiesOf(session.id!)).toEqual({
      elicitation: { form: {} },
      sampling: {},
      roots: {},
    });
    const initialized = backend.requests.find(r => r.method === 'notifications/initialized')!;
    expect(initialized.sessionId).toBe(session.id);
    expect(initialized.headers['mcp-protocol-version']).toBe(session.protocolVersion);
  });

  it('ends a client session’s backend sessions with DELETE', async () => {
    const a = await pool.sessionFor('client-a', {});
    const b = await pool.sessionFor('client-b', {});
    await pool.closeSessionOf('client-a');
    expect(backend.deletedSessions).toEqual([a.id]);
    expect(backend.sessionIds()).toEqual([b.id]);
    expect(pool.hasSessionOf('client-a')).toBe(false);
  });

  it('ends every session with a removed backend', async () => {
    await pool.sessionFor('client-a', {});
    await pool.sessionFor('client-b', {});
    await pool.closeSessions();
    expect(backend.deletedSessions).toHaveLength(2);
    expect(pool.sessionCount).toBe(0);
  });

  it('forgets a failed initialization so the next call retries', async () => {
    const nowhere = await startUnreachableServer();
    try {
      const dead = channelOf({ ...endpoint, url: nowhere.url });
      await expect(dead.sessionFor('client-a', {})).rejects.toThrow(
        /MCP server "raw" is unreachable/,
      );
      const attempts = nowhere.connections();
      expect(attempts).toBeGreaterThan(0);
      expect(dead.sessionCount).toBe(0);
      await expect(dead.sessionFor('client-a', {})).rejects.toThrow(/unreachable/);
      expect(nowhere.connections()).toBeGreaterThan(attempts); // tried again, not a cached failure
    } finally {
      await nowhere.close();
    }
  });
});
