import {
  clientRequestMethod,
  invalidParamsOf,
  isInputRequestMethod,
  mcpMethod,
  mcpNameSource,
  missingExtensionOf,
} from './mcpMethods';

describe('the method table', () => {
  it('knows only its own entries (a client may send "__proto__" or "toString")', () => {
    expect(mcpMethod('tools/call')?.kind).toBe('client-request');
    for (const method of ['__proto__', 'toString', 'constructor', 'tools/cal']) {
      expect(mcpMethod(method)).toBeUndefined();
    }
  });

  it('serves a client request only in the eras its entry names', () => {
    expect(clientRequestMethod('ping', 'legacy')).toBeDefined();
    expect(clientRequestMethod('ping', 'modern')).toBeUndefined();
    expect(clientRequestMethod('server/discover', 'legacy')).toBeUndefined();
    expect(clientRequestMethod('elicitation/create')).toBeUndefined();
  });

  it('names the body member Mcp-Name mirrors, and the input requests', () => {
    expect(mcpNameSource('tools/call')).toBe('name');
    expect(mcpNameSource('resources/read')).toBe('uri');
    expect(mcpNameSource('tools/list')).toBeUndefined();
    expect(isInputRequestMethod('elicitation/create')).toBe(true);
    expect(isInputRequestMethod('tools/call')).toBe(false);
  });

  it('words every missing or malformed param the same way', () => {
    expect(invalidParamsOf('tools/call', {})).toBe('tools/call needs params.name (a string)');
    expect(invalidParamsOf('resources/read', { uri: 7 })).toBe(
      'resources/read needs params.uri (a string)',
    );
    expect(invalidParamsOf('completion/complete', { ref: { type: 'ref/prompt' } })).toBe(
      'completion/complete needs params.ref ({type: "ref/prompt", name} or {type: "ref/resource", uri})',
    );
    expect(
      invalidParamsOf('completion/complete', { ref: { type: 'ref/resource', uri: 'u' } }),
    ).toBeUndefined();
    expect(invalidParamsOf('tools/call', { name: 'x' })).toBeUndefined();
    expect(invalidParamsOf('tools/list', {})).toBeUndefined();
  });

  it('serves the tasks extension’s methods to 2026-07-28 clients that declared it, mirrored by taskId', () => {
    const tasks = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      expect(clientRequestMethod(method, 'modern')).toBeDefined();
      expect(mcpNameSource(method)).toBe('taskId');
      expect(missingExtensionOf(method, {})).toBe('io.modelcontextprotocol/tasks');
      expect(missingExtensionOf(method, undefined)).toBe('io.modelcontextprotocol/tasks');
      expect(missingExtensionOf(method, tasks)).toBeUndefined();
    }
    expect(clientRequestMethod('tasks/update', 'legacy')).toBeUndefined();
    expect(clientRequestMethod('tasks/result', 'modern')).toBeUndefined();
    expect(clientRequestMethod('tasks/list', 'modern')).toBeUndefined();
    expect(missingExtensionOf('tools/call', {})).toBeUndefined();
    expect(invalidParamsOf('tasks/update', { taskId: 'x', inputResponses: { k: 'yes' } })).toBe(
      'tasks/update needs params.inputResponses (an object mapping each input request key to its result object)',
    );
  });
});
