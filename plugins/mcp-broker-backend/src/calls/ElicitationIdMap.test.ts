import { ExpirySweeper } from '../replicas/ExpirySweeper';
import { ElicitationIdMap, isGatewayId } from './ElicitationIdMap';

describe('ElicitationIdMap (in-memory store)', () => {
  let now = 1_000_000;
  const map = () => new ElicitationIdMap({ ttlMs: 1_000, now: () => now });
  const entry = {
    backendRequestId: '7.5',
    backend: 'everything',
    backendSessionId: 'backend-session',
    protocolVersion: '2025-11-25',
    clientSessionId: 'client-a',
    callId: 'call-1',
  };

  it('issues `<server>:<128-bit base64url>` ids that are all different', async () => {
    const ids = map();
    const issued = await Promise.all(Array.from({ length: 100 }, () => ids.register(entry)));
    const gatewayIds = issued.map(m => m.gatewayId);
    expect(new Set(gatewayIds).size).toBe(100);
    for (const id of gatewayIds) {
      expect(id).toMatch(/^everything:[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(id.split(':')[1], 'base64url')).toHaveLength(16);
      expect(isGatewayId(id)).toBe(true);
    }
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const ids = map();
    const { gatewayId } = await ids.register(entry);
    const claims = await Promise.all(
      Array.from({ length: 10 }, () => ids.claim(gatewayId, 'client-a')),
    );
    expect(claims.filter(c => c !== undefined)).toHaveLength(1);
    expect(claims.find(c => c)?.backendRequestId).toBe('7.5');
  });

  it('refuses a foreign session without consuming the id', async () => {
    const ids = map();
    const { gatewayId } = await ids.register(entry);
    expect(await ids.claim(gatewayId, 'client-b')).toBeUndefined();
    expect(await ids.claim(gatewayId, 'client-a')).toBeDefined();
  });

  it('refuses an id at and after its expiry, and the sweep removes it', async () => {
    const ids = map();
    const { gatewayId } = await ids.register(entry);
    now += 1_000;
    expect(await ids.claim(gatewayId, 'client-a')).toBeUndefined();
    expect(await ids.peek(gatewayId)).toBeDefined();
    jest.useFakeTimers();
    const sweeper = new ExpirySweeper(
      [ids],
      error => {
        throw error;
      },
      100,
      () => now,
    );
    try {
      sweeper.start();
      await jest.advanceTimersByTimeAsync(150);
      expect(await ids.peek(gatewayId)).toBeUndefined();
    } finally {
      sweeper.stop();
      jest.useRealTimers();
    }
  });

  it('retires a call’s ids and a client session’s ids', async () => {
    const ids = map();
    const one = await ids.register(entry);
    const two = await ids.register({ ...entry, callId: 'call-2' });
    const three = await ids.register({ ...entry, callId: 'call-3', clientSessionId: 'client-b' });
    await ids.releaseCall('call-1');
    expect(await ids.peek(one.gatewayId)).toBeUndefined();
    expect(await ids.peek(two.gatewayId)).toBeDefined();
    await ids.releaseClientSession('client-a');
    expect(await ids.peek(two.gatewayId)).toBeUndefined();
    expect(await ids.peek(three.gatewayId)).toBeDefined();
  });

  it('rejects ids that are not gateway ids before asking the store', async () => {
    const ids = map();
    for (const id of [
      7.5,
      42,
      'everything',
      'everything:short',
      'Everything:AAAAAAAAAAAAAAAAAAAAAA',
      null,
      undefined,
      {},
    ]) {
      expect(await ids.claim(id, 'client-a')).toBeUndefined();
    }
  });
});
