import { boundSessionInit } from './boundedSessionInit';

describe('boundSessionInit and the MCP Apps extension', () => {
  it('keeps io.modelcontextprotocol/ui of the declared extensions, and no other extension', () => {
    const result = boundSessionInit({
      capabilities: {
        elicitation: {},
        extensions: {
          'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] },
          'vendor/other': { big: 'x'.repeat(10_000) },
        },
      },
    });
    expect(result).toEqual({
      ok: true,
      init: {
        clientCapabilities: {
          elicitation: {},
          extensions: {
            'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] },
          },
        },
      },
    });
  });

  it('refuses a UI declaration that is not an object, naming it', () => {
    expect(
      boundSessionInit({ capabilities: { extensions: { 'io.modelcontextprotocol/ui': true } } }),
    ).toEqual({
      ok: false,
      message: 'params.capabilities.extensions["io.modelcontextprotocol/ui"] must be an object',
    });
  });

  it('counts the UI declaration in the size bound', () => {
    const result = boundSessionInit({
      capabilities: {
        extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['x'.repeat(5000)] } },
      },
    });
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringContaining('extensions["io.modelcontextprotocol/ui"]'),
    });
  });
});
