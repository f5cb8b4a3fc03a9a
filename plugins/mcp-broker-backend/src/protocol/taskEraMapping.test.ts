import {
  detailedTaskFromLegacyPayload,
  legacyTaskFromModern,
  legacyTaskSupportOf,
  modernTaskFromLegacy,
} from './taskEraMapping';
import { withoutRelatedTask } from './modernTasks';

const RELATED = 'io.modelcontextprotocol/related-task';
const LEGACY_TASK = {
  taskId: 'jobs:abc',
  status: 'working',
  createdAt: '2026-11-29T00:00:00Z',
  lastUpdatedAt: '2026-11-29T00:00:01Z',
  ttl: 60_000,
  pollInterval: 100,
};

describe('taskEraMapping', () => {
  it('reads a tool’s taskSupport, anything unknown being forbidden', () => {
    expect(legacyTaskSupportOf({ execution: { taskSupport: 'required' } })).toBe('required');
    expect(legacyTaskSupportOf({ execution: { taskSupport: 'optional' } })).toBe('optional');
    expect(legacyTaskSupportOf({ execution: { taskSupport: 'always' } })).toBe('forbidden');
    expect(legacyTaskSupportOf({})).toBe('forbidden');
    expect(legacyTaskSupportOf(undefined)).toBe('forbidden');
  });

  it('renames ttl and pollInterval and never carries both names; unlimited stays null', () => {
    const task = modernTaskFromLegacy(LEGACY_TASK);
    expect(task).toEqual({
      taskId: 'jobs:abc',
      status: 'working',
      createdAt: '2026-11-29T00:00:00Z',
      lastUpdatedAt: '2026-11-29T00:00:01Z',
      ttlMs: 60_000,
      pollIntervalMs: 100,
    });
    expect(modernTaskFromLegacy({ ...LEGACY_TASK, ttl: null, pollInterval: undefined })).toEqual(
      expect.objectContaining({ ttlMs: null }),
    );
    expect(modernTaskFromLegacy({ ...LEGACY_TASK, pollInterval: undefined })).not.toHaveProperty(
      'pollIntervalMs',
    );
  });

  it('removes the related-task meta and keeps the other _meta members', () => {
    expect(
      withoutRelatedTask({ content: [], _meta: { [RELATED]: { taskId: 'x' }, other: 1 } }),
    ).toEqual({ content: [], _meta: { other: 1 } });
    const plain = { content: [] };
    expect(withoutRelatedTask(plain)).toBe(plain);
  });

  it('maps a legacy payload per the status table: results complete (isError too), errors fail', () => {
    const task = modernTaskFromLegacy({ ...LEGACY_TASK, status: 'failed' });
    const toolError = { content: [{ type: 'text', text: 'no' }], isError: true };
    expect(
      detailedTaskFromLegacyPayload(task, {
        result: { ...toolError, _meta: { [RELATED]: { taskId: 'x' } } },
      }),
    ).toEqual({ ...task, status: 'completed', result: { ...toolError, _meta: {} } });
    const error = { code: -32603, message: 'boom' };
    expect(detailedTaskFromLegacyPayload(task, { error })).toEqual({
      ...task,
      status: 'failed',
      error,
    });
    expect(detailedTaskFromLegacyPayload(task, { error })).not.toHaveProperty('result');
  });

  it('shows a modern task as a legacy Task: names back, isError completed as failed, inlined members left out', () => {
    const modern = {
      taskId: 'jobs:abc',
      status: 'completed',
      createdAt: '2026-11-29T00:00:00Z',
      lastUpdatedAt: '2026-11-29T00:00:01Z',
      ttlMs: 60_000,
      pollIntervalMs: 100,
      resultType: 'complete',
      result: { content: [], isError: true },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'broker' }, kept: 1 },
    };
    expect(legacyTaskFromModern(modern)).toEqual({
      taskId: 'jobs:abc',
      status: 'failed',
      createdAt: '2026-11-29T00:00:00Z',
      lastUpdatedAt: '2026-11-29T00:00:01Z',
      ttl: 60_000,
      pollInterval: 100,
      _meta: { kept: 1 },
    });
    const ok = legacyTaskFromModern({ ...modern, result: { content: [] }, _meta: undefined });
    expect(ok.status).toBe('completed');
    expect(ok).not.toHaveProperty('_meta');
    expect(legacyTaskFromModern({ ...modern, status: 'failed', error: { code: 1 } })).toEqual(
      expect.objectContaining({ status: 'failed' }),
    );
    expect(legacyTaskFromModern({ taskId: 'x', status: 'working', ttlMs: null }).ttl).toBeNull();
  });
});
