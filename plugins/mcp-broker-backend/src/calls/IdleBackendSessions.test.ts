import { mockServices } from '@backstage/backend-test-utils';
import { IdleBackendSessions } from './IdleBackendSessions';

describe('IdleBackendSessions', () => {
  const closed: string[] = [];
  const closeSessionsOf = async (key: string) => {
    closed.push(key);
  };
  const sessions = () =>
    new IdleBackendSessions(closeSessionsOf, { idleMs: 1_000, logger: mockServices.logger.mock() });

  beforeEach(() => closed.splice(0));

  it('closes the backend sessions of a key once it was idle for the idle time', async () => {
    const idle = sessions();
    const end = idle.begin('stateless:a');
    end();
    const endedAt = Date.now();
    await idle.sweep(endedAt + 999);
    expect(closed).toEqual([]);
    await idle.sweep(endedAt + 1_000 + 50);
    expect(closed).toEqual(['stateless:a']);
    expect(idle.size()).toBe(0);
  });

  it('never closes a key with a call in flight, however long it runs', async () => {
    const idle = sessions();
    const first = idle.begin('stateless:a');
    const second = idle.begin('stateless:a');
    first();
    await idle.sweep(Date.now() + 60_000);
    expect(closed).toEqual([]);
    second();
    second(); // ending twice counts once
    await idle.sweep(Date.now() + 60_000);
    expect(closed).toEqual(['stateless:a']);
  });

  it('forgets every key on stop (the pool closes the sessions at shutdown)', async () => {
    const idle = sessions();
    idle.begin('stateless:a')();
    idle.stop();
    await idle.sweep(Date.now() + 60_000);
    expect(closed).toEqual([]);
  });
});
