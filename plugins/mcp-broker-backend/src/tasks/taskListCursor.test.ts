import { decodeTaskListCursor, encodeTaskListCursor } from './taskListCursor';
import { newBrokerTaskId } from './brokerTaskId';

describe('broker task ids', () => {
  it('are the server name, a colon and 32 random bytes in base64url, never repeated', () => {
    const ids = new Set(Array.from({ length: 100 }, () => newBrokerTaskId('deploys')));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^deploys:[A-Za-z0-9_-]{43}$/);
  });
});

describe('tasks/list cursors', () => {
  it('round-trip the position of a page’s last item', () => {
    const position = { recordedAt: 1_800_000_000_123, taskId: newBrokerTaskId('deploys') };
    const cursor = encodeTaskListCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeTaskListCursor(cursor)).toEqual(position);
  });

  it.each([
    ['not a string', 42],
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['another version', Buffer.from('{"v":2,"t":1,"id":"x"}').toString('base64url')],
    ['a negative time', Buffer.from('{"v":1,"t":-1,"id":"x"}').toString('base64url')],
    ['an empty id', Buffer.from('{"v":1,"t":1,"id":""}').toString('base64url')],
    ['an extra field', Buffer.from('{"v":1,"t":1,"id":"x","p":"bob"}').toString('base64url')],
    ['too long', 'a'.repeat(600)],
  ])('refuses a cursor that is %s', (_, cursor) => {
    expect(decodeTaskListCursor(cursor)).toBeUndefined();
  });
});
