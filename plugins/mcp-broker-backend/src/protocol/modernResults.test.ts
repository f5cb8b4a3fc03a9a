import {
  aggregatedTtlMs,
  cacheableResult,
  discoverResult,
  honouredFilter,
  inputRequestFromServerRequest,
  inputRequiredResult,
  modernBackendError,
  modernErrorHttpStatus,
  readInputRetry,
  readSubscriptionFilter,
  subscriptionAcknowledged,
  subscriptionClosedResult,
  subscriptionListChanged,
  withoutTasks,
} from './modernResults';

const SERVER_INFO = {
  'io.modelcontextprotocol/serverInfo': { name: 'backstage-mcp-broker', version: '0.1.0' },
};

describe('2026-07-28 results', () => {
  it('discover lists both eras, the capabilities without tasks, who answers and the cache hints', () => {
    expect(
      discoverResult({
        capabilities: {
          tools: { listChanged: true },
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
        ttlMs: 60_000,
        cacheScope: 'private',
      }),
    ).toEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
      capabilities: { tools: { listChanged: true } },
      ttlMs: 60_000,
      cacheScope: 'private',
      _meta: SERVER_INFO,
    });
  });

  it('lists carry ttlMs and cacheScope; a backend serverInfo in _meta is kept', () => {
    const backendMeta = { 'io.modelcontextprotocol/serverInfo': { name: 'b', version: '1' } };
    expect(
      cacheableResult({ tools: [], _meta: backendMeta }, { ttlMs: -5, cacheScope: 'private' }),
    ).toEqual({
      tools: [],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: backendMeta,
    });
  });

  it('takes the smallest positive backend ttl, else the broker default', () => {
    expect(aggregatedTtlMs([0, 30_000, undefined, 5_000, -1, 'x'], 60_000)).toBe(5_000);
    expect(aggregatedTtlMs([0, undefined], 60_000)).toBe(60_000);
    expect(aggregatedTtlMs([], 0)).toBe(0);
  });

  it('removes the tasks extension and the 2025 tasks capability, keeping other extensions', () => {
    expect(
      withoutTasks({
        tasks: { list: {} },
        elicitation: {},
        extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/ui': { a: 1 } },
      }),
    ).toEqual({ elicitation: {}, extensions: { 'io.modelcontextprotocol/ui': { a: 1 } } });
    expect(withoutTasks({ extensions: { 'io.modelcontextprotocol/tasks': {} } })).toEqual({});
  });

  it('input_required carries the requests under their keys and the state, never neither', () => {
    const elicitation = inputRequestFromServerRequest('elicitation/create', {
      message: 'Name?',
      requestedSchema: { type: 'object', properties: {} },
    })!;
    expect(elicitation).toEqual({
      method: 'elicitation/create',
      params: {
        message: 'Name?',
        requestedSchema: { type: 'object', properties: {} },
        mode: 'form',
      },
    });
    expect(inputRequestFromServerRequest('roots/list', undefined)).toEqual({
      method: 'roots/list',
    });
    expect(inputRequestFromServerRequest('tools/call', {})).toBeUndefined();
    expect(inputRequiredResult({ inputRequests: { a: elicitation }, requestState: 's' })).toEqual({
      resultType: 'input_required',
      inputRequests: { a: elicitation },
      requestState: 's',
      _meta: SERVER_INFO,
    });
    expect(() => inputRequiredResult({})).toThrow();
  });

  it('reads a retry and says what is wrong with a malformed one', () => {
    expect(
      readInputRetry({ inputResponses: { a: { action: 'accept' } }, requestState: 's' }),
    ).toEqual({
      inputResponses: { a: { action: 'accept' } },
      requestState: 's',
    });
    expect(readInputRetry({ requestState: 7 })).toHaveProperty('invalid');
    expect(readInputRetry({ inputResponses: { a: 'yes' } })).toHaveProperty('invalid');
    expect(readInputRetry(undefined)).toEqual({});
  });
});

describe('subscriptions/listen', () => {
  it('acknowledges only the kinds asked for that the broker can deliver, never resource updates', () => {
    const requested = readSubscriptionFilter({
      notifications: {
        toolsListChanged: true,
        promptsListChanged: true,
        resourceSubscriptions: ['x'],
      },
    });
    if ('invalid' in requested) throw new Error(requested.invalid);
    const { filter, kinds } = honouredFilter(requested, new Set(['tools', 'resources']));
    expect(filter).toEqual({ toolsListChanged: true });
    expect([...kinds]).toEqual(['tools']);
    expect(subscriptionAcknowledged(7, filter)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { 'io.modelcontextprotocol/subscriptionId': 7 },
        notifications: { toolsListChanged: true },
      },
    });
  });

  it('refuses a malformed filter with a message', () => {
    expect(readSubscriptionFilter({})).toHaveProperty('invalid');
    expect(readSubscriptionFilter({ notifications: { toolsListChanged: 'yes' } })).toHaveProperty(
      'invalid',
    );
    expect(
      readSubscriptionFilter({ notifications: { resourceSubscriptions: [1] } }),
    ).toHaveProperty('invalid');
    expect(readSubscriptionFilter({ notifications: { taskIds: 'jobs:a' } })).toEqual({
      invalid: 'params.notifications.taskIds must be an array of task ids',
    });
    expect(readSubscriptionFilter({ notifications: { taskIds: ['jobs:a', 2] } })).toHaveProperty(
      'invalid',
    );
  });

  it('reads the task ids a listen names (tasks extension, contract §2.10)', () => {
    expect(readSubscriptionFilter({ notifications: { taskIds: ['jobs:a', 'jobs:b'] } })).toEqual({
      taskIds: ['jobs:a', 'jobs:b'],
    });
  });

  it('tags change notifications and the closing result with the subscription id', () => {
    expect(subscriptionListChanged('l-1', 'tools')).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'l-1' } },
    });
    expect(subscriptionClosedResult('l-1')).toEqual({
      resultType: 'complete',
      _meta: { ...SERVER_INFO, 'io.modelcontextprotocol/subscriptionId': 'l-1' },
    });
  });
});

describe('modernBackendError', () => {
  it("turns a 2025 backend's -32002 for resources/read into -32602 with data.uri", () => {
    expect(
      modernBackendError(
        'resources/read',
        { uri: 'test://missing' },
        { code: -32002, message: 'Resource not found', data: { hint: 'x' } },
      ),
    ).toEqual({
      code: -32602,
      message: 'Resource not found',
      data: { hint: 'x', uri: 'test://missing' },
    });
  });

  it('passes every other error unchanged', () => {
    const error = { code: -32002, message: 'not a resource read' };
    expect(modernBackendError('prompts/get', { name: 'p' }, error)).toBe(error);
    const other = { code: -32603, message: 'broken' };
    expect(modernBackendError('resources/read', { uri: 'u' }, other)).toBe(other);
  });

  it('gives -32021 HTTP 400 and the broker’s open task limit 429; other errors stay in band', () => {
    expect(modernErrorHttpStatus({ code: -32021 })).toBe(400);
    expect(modernErrorHttpStatus({ code: -32000, data: { reason: 'task-limit', limit: 8 } })).toBe(
      429,
    );
    expect(modernErrorHttpStatus({ code: -32000, data: { reason: 'other' } })).toBe(200);
    expect(modernErrorHttpStatus({ code: -32602, data: { reason: 'task-limit' } })).toBe(200);
  });

  it('declares the tasks extension in discover when the broker relays it', () => {
    expect(
      discoverResult({
        capabilities: { tools: {}, tasks: { list: {} } },
        tasks: true,
        ttlMs: 0,
        cacheScope: 'public',
      }).capabilities,
    ).toEqual({ tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } });
  });
});
