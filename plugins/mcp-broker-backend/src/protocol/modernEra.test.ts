import { withoutRequestEnvelope } from './modernEra';

const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
  'io.modelcontextprotocol/logLevel': 'info',
};

describe('withoutRequestEnvelope', () => {
  it('removes the envelope keys and keeps the rest of _meta (progressToken)', () => {
    expect(withoutRequestEnvelope({ name: 't', _meta: { ...envelope, progressToken: 7 } })).toEqual(
      { name: 't', _meta: { progressToken: 7 } },
    );
  });

  it('drops a _meta left empty and leaves params without _meta alone', () => {
    expect(withoutRequestEnvelope({ name: 't', _meta: envelope })).toEqual({ name: 't' });
    const params = { name: 't' };
    expect(withoutRequestEnvelope(params)).toBe(params);
    expect(withoutRequestEnvelope(undefined)).toEqual({});
  });
});
