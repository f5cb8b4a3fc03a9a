import { classifyJsonRpc, jsonRpcMessageKind } from './jsonRpc';

describe('JSON-RPC classification (one classifier, two depths)', () => {
  const kindOf = (value: unknown) => classifyJsonRpc(value)?.kind ?? 'invalid';

  it('agrees with the envelope kind on well-formed messages', () => {
    const messages = [
      { jsonrpc: '2.0', id: 7.5, method: 'elicitation/create', params: {} },
      { jsonrpc: '2.0', method: 'notifications/progress' },
      { jsonrpc: '2.0', id: 'a', result: {} },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'x' } },
    ];
    for (const message of messages) {
      expect(kindOf(message)).toBe(jsonRpcMessageKind(message));
      expect(kindOf(message)).not.toBe('invalid');
    }
  });

  it('relays what only the broker itself would refuse to read', () => {
    const relayedOnly = [
      { jsonrpc: '2.0', id: 1, result: 'not an object' },
      { jsonrpc: '2.0', id: 1, error: 'not an object' },
      { jsonrpc: '2.0', id: 1, method: 'x', params: [1, 2] },
      { jsonrpc: '2.0', id: null, result: {} },
    ];
    for (const message of relayedOnly) {
      expect(jsonRpcMessageKind(message)).not.toBe('invalid');
      expect(classifyJsonRpc(message)).toBeUndefined();
    }
  });

  it('refuses envelopes that are not JSON-RPC 2.0 at either depth', () => {
    const invalid = [
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } },
      { jsonrpc: '2.0', id: {}, method: 'ping' },
      { jsonrpc: '2.0', id: Infinity, method: 'ping' },
      { id: 1, method: 'ping' },
      [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
      null,
    ];
    for (const message of invalid) {
      expect(jsonRpcMessageKind(message)).toBe('invalid');
      expect(classifyJsonRpc(message)).toBeUndefined();
    }
  });
});
