/*
 * TaskNotifications' ordering rule (docs/contracts/tasks-and-apps.md §2.10 "Fan-out": at most once
 * per change and stream, in order per task), in one process (`sessionStore: memory`, no bus):
 * two writers' changes published in the wrong order, and a change published twice. The
 * cross-replica delivery through the signal bus is tested in plugin.taskNotifications.test.ts.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import { TaskNotifications, type TaskStatusStream } from './TaskNotifications';
import type { StoredTask } from './TaskStore';

const PRINCIPAL = 'user:default/alice';

/** Alice's deploy task at `version`, in `status`. */
function task(version: number, status: StoredTask['status']): StoredTask {
  return {
    taskId: 'jobs:one',
    principal: PRINCIPAL,
    server: 'jobs',
    serverIdentity: 'identity-1',
    tool: 'deploy',
    credentialMode: 'broker',
    backendEra: 'legacy',
    status,
    createdAt: '2027-01-15T08:00:00Z',
    lastUpdatedAt: `2027-01-15T08:00:0${version}Z`,
    ttlMs: 60_000,
    recordedAt: 1,
    expiresAt: 60_001,
    version,
  };
}

/** A stream that records what it is sent and may use every tool. */
function recordingStream(): TaskStatusStream & { messages: JsonRpcMessage[] } {
  const messages: JsonRpcMessage[] = [];
  return {
    messages,
    closed: false,
    send: message => {
      messages.push(message);
      return true;
    },
    mayUse: async () => true,
  };
}

describe('task status notifications in one process', () => {
  it('delivers each change of a task once and never an older one after a newer', async () => {
    let now = 0;
    const notifications = new TaskNotifications({
      identityOf: () => 'identity-1',
      logger: mockServices.logger.mock(),
      now: () => now,
    });
    const stream = recordingStream();
    notifications.listen(PRINCIPAL, stream);
    now = 10;
    const statuses = () =>
      stream.messages.map(m => ('params' in m ? (m.params as { status: string }).status : ''));
    // The writer of version 3 publishes before the writer of version 2.
    await notifications.publish(task(3, 'completed'));
    await notifications.publish(task(2, 'working'));
    // The same change seen twice (a signal read again while it lives).
    await notifications.publish(task(3, 'completed'));
    await new Promise(setImmediate);
    expect(statuses()).toEqual(['completed']);
    await notifications.publish(task(4, 'completed'));
    await new Promise(setImmediate);
    expect(statuses()).toEqual(['completed', 'completed']);
    notifications.close();
  });
});
