/*
 * The one replacement of a forgotten pinned session (docs/contracts/tasks-and-apps.md §2.11), on
 * its own: when it is tried, when the rows move, and that a failure to move them loses no
 * answer. The plugin test (plugin.replacedPinnedSession.test.ts) shows it with the real fixture.
 */
import { BackendError } from '../backend/backendErrors';
import type { JsonRpcResponse } from '../protocol/jsonRpc';
import { sendReplacingForgottenSession } from './replacePinnedSession';
import type { TaskStore } from './TaskStore';

const lost = () => new BackendError('jobs', 'session-lost', 'MCP server "jobs" forgot the session');
const ok: JsonRpcResponse = { jsonrpc: '2.0', id: 1, result: { status: 'working' } };
const notFound: JsonRpcResponse = {
  jsonrpc: '2.0',
  id: 1,
  error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
};

/** A send that answers each session from `answers` (an Error is thrown), recording the sessions. */
function sender(answers: Record<string, JsonRpcResponse | Error>) {
  const sent: Array<string | undefined> = [];
  return {
    sent,
    send: async (sessionId: string | undefined) => {
      sent.push(sessionId);
      const answer = answers[sessionId ?? ''];
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

function storeRecording(fails = false) {
  const moved: Array<[string, string]> = [];
  const store = {
    replaceBackendSession: async (_owner: unknown, forgotten: string, replacement: string) => {
      if (fails) throw new Error('database down');
      moved.push([forgotten, replacement]);
    },
  } as unknown as TaskStore;
  return { store, moved };
}

const task = {
  backendSessionId: 'old',
  principal: 'user:default/alice',
  server: 'jobs',
  serverIdentity: 'identity-1',
};
const newSession = async () => ({ id: 'new', protocolVersion: '2025-11-25', capabilities: {} });

describe('sendReplacingForgottenSession', () => {
  it('sends on the pinned session and replaces nothing while it is known', async () => {
    const { send, sent } = sender({ old: ok });
    const { store, moved } = storeRecording();
    expect(await sendReplacingForgottenSession(task, { send, newSession, store })).toBe(ok);
    expect([sent, moved]).toEqual([['old'], []]);
  });

  it('sends once more on a new session and moves the rows when the backend answers there', async () => {
    const { send, sent } = sender({ old: lost(), new: ok });
    const { store, moved } = storeRecording();
    expect(await sendReplacingForgottenSession(task, { send, newSession, store })).toBe(ok);
    expect([sent, moved]).toEqual([['old', 'new'], [['old', 'new']]]);
  });

  it('moves nothing when the task is unknown on the new session, and passes that answer', async () => {
    const { send } = sender({ old: lost(), new: notFound });
    const { store, moved } = storeRecording();
    expect(await sendReplacingForgottenSession(task, { send, newSession, store })).toBe(notFound);
    expect(moved).toEqual([]);
  });

  it('passes the answer when the rows cannot be moved', async () => {
    const { send } = sender({ old: lost(), new: ok });
    const { store } = storeRecording(true);
    expect(await sendReplacingForgottenSession(task, { send, newSession, store })).toBe(ok);
  });

  it('tries once only, and never for another failure', async () => {
    const twice = sender({ old: lost(), new: lost() });
    const { store } = storeRecording();
    await expect(
      sendReplacingForgottenSession(task, { send: twice.send, newSession, store }),
    ).rejects.toMatchObject({ reason: 'session-lost' });
    expect(twice.sent).toEqual(['old', 'new']);
    const down = sender({
      old: new BackendError('jobs', 'timeout', 'MCP server "jobs" timed out'),
    });
    await expect(
      sendReplacingForgottenSession(task, { send: down.send, newSession, store }),
    ).rejects.toMatchObject({ reason: 'timeout' });
    expect(down.sent).toEqual(['old']);
  });
});
