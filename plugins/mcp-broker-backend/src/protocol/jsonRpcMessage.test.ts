import {
  classifyJsonRpcMessage,
  findRawTopLevelMember,
  parseJsonRpcMessage,
} from './jsonRpcMessage';

describe('jsonRpcMessage', () => {
  it.each([
    ['{"jsonrpc":"2.0","id":7.5,"method":"elicitation/create"}', '7.5'],
    ['{"jsonrpc":"2.0","id":7.0,"method":"x"}', '7.0'],
    ['{"jsonrpc":"2.0","id":12345678901234567890,"method":"x"}', '12345678901234567890'],
    [
      '{ "params": {"id": 1, "s": "}\\"{"}, "id" : "a\\"b" , "jsonrpc":"2.0", "method":"x"}',
      '"a\\"b"',
    ],
    ['{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}', undefined],
  ])('keeps the raw id token of %s', (text, raw) => {
    expect(parseJsonRpcMessage(text)?.rawId).toBe(raw);
  });

  it('classifies requests, notifications, responses and rejects the rest', () => {
    const kind = (text: string) => {
      const parsed = parseJsonRpcMessage(text);
      return parsed ? classifyJsonRpcMessage(parsed) : 'not json';
    };
    expect(kind('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toBe('request');
    expect(kind('{"jsonrpc":"2.0","method":"notifications/progress"}')).toBe('notification');
    expect(kind('{"jsonrpc":"2.0","id":1,"result":{}}')).toBe('response');
    expect(kind('{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}')).toBe('response');
    expect(kind('{"jsonrpc":"2.0","id":1,"result":{},"error":{}}')).toBe('invalid');
    expect(kind('{"jsonrpc":"2.0","id":{},"method":"ping"}')).toBe('invalid');
    expect(kind('{"id":1,"method":"ping"}')).toBe('invalid');
    expect(kind('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')).toBe('not json');
    expect(kind('{"jsonrpc":"2.0",')).toBe('not json');
  });

  it('finds the last top-level occurrence, as JSON.parse does', () => {
    expect(findRawTopLevelMember('{"id":1,"x":{"id":2},"id":3}', 'id')).toBe('3');
  });
});
