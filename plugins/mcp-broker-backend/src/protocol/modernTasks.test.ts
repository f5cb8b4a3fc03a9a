import { RELATED_TASK_META } from './legacyTasks';
import {
  declaresTasksExtension,
  inputRequestsWithoutRelatedTask,
  modernTaskOf,
  requiresTasksExtension,
  taskAckOf,
  TASKS_EXTENSION,
  withoutRelatedTask,
  withTasksExtension,
} from './modernTasks';

describe('the 2026-07-28 tasks extension’s wire shapes', () => {
  it('reads a declaration of the extension, and only an object counts', () => {
    expect(declaresTasksExtension({ extensions: { [TASKS_EXTENSION]: {} } })).toBe(true);
    expect(declaresTasksExtension({ extensions: { [TASKS_EXTENSION]: true } })).toBe(false);
    expect(declaresTasksExtension({ extensions: { 'io.modelcontextprotocol/ui': {} } })).toBe(
      false,
    );
    expect(declaresTasksExtension({ tasks: {} })).toBe(false);
    expect(declaresTasksExtension(undefined)).toBe(false);
  });

  it('adds the declaration and keeps the other extensions', () => {
    const ui = { mimeTypes: ['text/html;profile=mcp-app'] };
    expect(
      withTasksExtension({ elicitation: {}, extensions: { 'io.modelcontextprotocol/ui': ui } }),
    ).toEqual({
      elicitation: {},
      extensions: { 'io.modelcontextprotocol/ui': ui, [TASKS_EXTENSION]: {} },
    });
  });

  it('tells a -32021 that requires the extension from other errors', () => {
    const required = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
    expect(requiresTasksExtension({ code: -32021, message: 'm', data: required })).toBe(true);
    expect(
      requiresTasksExtension({
        code: -32021,
        message: 'm',
        data: { requiredCapabilities: { elicitation: {} } },
      }),
    ).toBe(false);
    expect(requiresTasksExtension({ code: -32602, message: 'm', data: required })).toBe(false);
  });

  it('reads a flat task, dropping fields of the wrong type', () => {
    expect(
      modernTaskOf({
        resultType: 'task',
        taskId: 't-1',
        status: 'working',
        createdAt: '2026-11-29T17:00:00Z',
        ttlMs: null,
        pollIntervalMs: -5,
        statusMessage: 7,
      }),
    ).toEqual({
      taskId: 't-1',
      status: 'working',
      statusMessage: undefined,
      createdAt: '2026-11-29T17:00:00Z',
      lastUpdatedAt: undefined,
      ttlMs: null,
      pollIntervalMs: undefined,
    });
    expect(modernTaskOf({ taskId: 't-1', status: 'done' })).toBeUndefined();
    expect(modernTaskOf({ task: { taskId: 't-1', status: 'working' } })).toBeUndefined();
  });

  it('removes the 2025-11-25 related-task meta, which names the backend’s task, wherever a modern client would get it', () => {
    const related = { [RELATED_TASK_META]: { taskId: 'backend-7' }, trace: 'kept' };
    expect(
      withoutRelatedTask({ content: [{ type: 'text', text: 'done' }], _meta: related }),
    ).toEqual({ content: [{ type: 'text', text: 'done' }], _meta: { trace: 'kept' } });
    expect(
      inputRequestsWithoutRelatedTask({
        name: { method: 'elicitation/create', params: { message: 'Name?', _meta: related } },
        odd: 'not a request',
      }),
    ).toEqual({
      name: {
        method: 'elicitation/create',
        params: { message: 'Name?', _meta: { trace: 'kept' } },
      },
      odd: 'not a request',
    });
    // An ack is its result type and meta: a member echoing the task goes.
    expect(
      taskAckOf({
        resultType: 'complete',
        taskId: 'backend-7',
        _meta: { [RELATED_TASK_META]: {} },
      }),
    ).toEqual({ resultType: 'complete' });
    expect(taskAckOf({ _meta: related })).toEqual({ _meta: { trace: 'kept' } });
  });
});
