import { validateListChangedEvent } from './eventValidation';

const advertised = new Set(['tools', 'resources'] as const);
const event = (message: unknown) => JSON.stringify(message);

describe('validateListChangedEvent', () => {
  it('accepts a list_changed notification of an advertised kind, with or without small params', () => {
    expect(
      validateListChangedEvent(
        event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }),
        advertised,
      ),
    ).toEqual({ ok: true, kind: 'tools' });
    expect(
      validateListChangedEvent(
        event({
          jsonrpc: '2.0',
          method: 'notifications/resources/list_changed',
          params: { _meta: {} },
        }),
        advertised,
      ),
    ).toEqual({ ok: true, kind: 'resources' });
  });

  it.each([
    ['not JSON', '{nope'],
    [
      'a request (has an id)',
      event({ jsonrpc: '2.0', id: 1, method: 'notifications/tools/list_changed' }),
    ],
    ['a null id', event({ jsonrpc: '2.0', id: null, method: 'notifications/tools/list_changed' })],
    ['the wrong version', event({ jsonrpc: '1.0', method: 'notifications/tools/list_changed' })],
    ['another method', event({ jsonrpc: '2.0', method: 'notifications/progress' })],
    [
      'array params',
      event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: [] }),
    ],
    [
      'large params',
      event({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { x: 'y'.repeat(2000) },
      }),
    ],
    [
      'extra members',
      event({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', result: {} }),
    ],
    [
      'a kind not advertised',
      event({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' }),
    ],
    ['an array', event([{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }])],
  ])('rejects %s', (_name, input) => {
    expect(validateListChangedEvent(input, advertised).ok).toBe(false);
  });
});
