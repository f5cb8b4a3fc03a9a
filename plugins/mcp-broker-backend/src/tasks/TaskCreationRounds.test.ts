/*
 * TaskCreationRounds (docs/contracts/tasks-and-apps.md §2.12.4, MRTR before the task) with the
 * real RequestStateSealer and a creation the test drives: rounds of what the backend asks
 * together, answers posted with the backend's ids, unanswered requests asked again, the
 * creation's own signal (cancelled by a client gone while waiting, or a round left unanswered),
 * and retries that cannot resume.
 */
import { RequestStateRefusal, RequestStateSealer } from '../inputRequests/RequestStateSealer';
import { MemoryRequestStateNonceStore } from '../inputRequests/requestStateNonces';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import type { TaskStreamAsker } from '../types';
import { TaskCreationRounds, type TaskCreationRun } from './TaskCreationRounds';
import type { TaskReply } from './TaskReply';

const BINDING = {
  principal: 'user:default/alice',
  method: 'tools/call',
  name: 'jobs/confirm',
  arguments: { target: 'web' },
};
const SESSION = { id: 'pinned-1', protocolVersion: '2025-11-25' };
const TASK: TaskReply = { result: { resultType: 'task', taskId: 'jobs:task', status: 'working' } };

function elicitation(rawId: string, message: string) {
  return {
    sessionId: SESSION.id,
    protocolVersion: SESSION.protocolVersion,
    rawId,
    message: {
      jsonrpc: '2.0',
      id: Number(rawId),
      method: 'elicitation/create',
      params: { message, requestedSchema: { type: 'object', properties: {} } },
    },
  };
}

/** A creation the test drives: its asker, its signal, and how it ends. */
function drivenCreation() {
  const driven: {
    asker?: TaskStreamAsker;
    signal?: AbortSignal;
    finish?: (reply: TaskReply | undefined) => void;
    askOnGiven?: boolean;
  } = {};
  const run: TaskCreationRun = (askOn, signal) => {
    driven.askOnGiven = askOn !== undefined;
    driven.asker = askOn?.('jobs');
    driven.signal = signal;
    return new Promise(resolve => {
      driven.finish = resolve;
    });
  };
  return { driven, run };
}

function roundsWith(ttlMs = 60_000, sealed = true) {
  const responses: Array<{ server: string; session: unknown; rawId: string; answer: unknown }> = [];
  const rounds = new TaskCreationRounds({
    sealer: sealed
      ? new RequestStateSealer({
          keys: fixedHmacKeys(Buffer.alloc(32, 3)),
          ttlMs: 60_000,
          nonces: new MemoryRequestStateNonceStore(),
        })
      : undefined,
    ttlMs,
    respond: async (server, session, rawId, answer) => {
      responses.push({ server, session, rawId, answer });
    },
  });
  return { rounds, responses };
}

const aborted = (signal: AbortSignal) =>
  new Promise<void>(resolve => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve());
  });

describe('TaskCreationRounds', () => {
  it('puts what the backend asks together in one round, posts each answer with its id, asks the unanswered again, then gives the task', async () => {
    const { rounds, responses } = roundsWith();
    const { driven, run } = drivenCreation();
    const first = rounds.start('jobs', BINDING, new AbortController().signal, run);
    await driven.asker!.ask(elicitation('7', 'First?'));
    await driven.asker!.ask(elicitation('8', 'Second?'));
    const round1 = (await first) as { result: any };
    expect(round1.result.resultType).toBe('input_required');
    const keys = Object.keys(round1.result.inputRequests);
    expect(keys).toHaveLength(2);
    expect(Object.values(round1.result.inputRequests)).toEqual([
      { method: 'elicitation/create', params: expect.objectContaining({ message: 'First?' }) },
      { method: 'elicitation/create', params: expect.objectContaining({ message: 'Second?' }) },
    ]);
    expect(responses).toEqual([]);

    // One answered (and a key the round did not ask, ignored): the other is asked again.
    const round2 = (await rounds.resume(
      BINDING,
      {
        requestState: round1.result.requestState,
        inputResponses: { [keys[0]]: { action: 'accept' }, 'input-99': { action: 'decline' } },
      },
      new AbortController().signal,
    )) as { result: any };
    expect(responses).toEqual([
      { server: 'jobs', session: SESSION, rawId: '7', answer: { result: { action: 'accept' } } },
    ]);
    expect(Object.keys(round2.result.inputRequests)).toEqual([keys[1]]);
    expect(round2.result.requestState).not.toBe(round1.result.requestState);

    const last = rounds.resume(
      BINDING,
      {
        requestState: round2.result.requestState,
        inputResponses: { [keys[1]]: { action: 'decline' } },
      },
      new AbortController().signal,
    );
    await new Promise(resolve => setImmediate(resolve));
    expect(responses.map(response => response.rawId)).toEqual(['7', '8']);
    driven.finish!(TASK);
    expect(await last).toEqual(TASK);
    expect(driven.signal!.aborted).toBe(false);

    // Each state answers one retry.
    await expect(
      rounds.resume(
        BINDING,
        { requestState: round2.result.requestState, inputResponses: {} },
        new AbortController().signal,
      ),
    ).rejects.toMatchObject({ reason: 'replayed' });
  });

  it('gives the creation’s answer as it is when the backend asks nothing, no answer too', async () => {
    const { rounds } = roundsWith();
    const { driven, run } = drivenCreation();
    const answer = rounds.start('jobs', BINDING, new AbortController().signal, run);
    driven.finish!(TASK);
    expect(await answer).toEqual(TASK);

    // Nothing sent (the person's bound, an optional tool): the call is to run plain.
    const plain = drivenCreation();
    const none = rounds.start('jobs', BINDING, new AbortController().signal, plain.run);
    plain.driven.finish!(undefined);
    expect(await none).toBeUndefined();
  });

  it('cancels the creation when its client goes away while waiting, not when it leaves after a round', async () => {
    const { rounds } = roundsWith();
    const first = drivenCreation();
    const client = new AbortController();
    const round = rounds.start('jobs', BINDING, client.signal, first.run);
    await first.driven.asker!.ask(elicitation('1', 'Sure?'));
    await round;
    client.abort();
    expect(first.driven.signal!.aborted).toBe(false);

    const second = drivenCreation();
    const gone = new AbortController();
    void rounds.start('jobs', BINDING, gone.signal, second.run);
    gone.abort();
    await aborted(second.driven.signal!);
  });

  it('cancels a creation whose round is not answered in time; its retry is refused, nothing posted', async () => {
    const { rounds, responses } = roundsWith(1);
    const { driven, run } = drivenCreation();
    const round = rounds.start('jobs', BINDING, new AbortController().signal, run);
    await driven.asker!.ask(elicitation('3', 'Sure?'));
    const { result } = (await round) as { result: any };
    await aborted(driven.signal!);
    driven.finish!({ error: { code: -32603, message: 'cancelled' }, httpStatus: 200 });
    await new Promise(resolve => setImmediate(resolve));
    const refusal = await rounds
      .resume(
        BINDING,
        { requestState: result.requestState, inputResponses: { 'input-1': { action: 'accept' } } },
        new AbortController().signal,
      )
      .catch(error => error);
    expect(refusal).toBeInstanceOf(RequestStateRefusal);
    expect(refusal.reason).toBe('call-ended');
    expect(responses).toEqual([]);
  });

  it('refuses a retry for another caller before anything is posted', async () => {
    const { rounds, responses } = roundsWith();
    const { driven, run } = drivenCreation();
    const round = rounds.start('jobs', BINDING, new AbortController().signal, run);
    await driven.asker!.ask(elicitation('4', 'Sure?'));
    const { result } = (await round) as { result: any };
    await expect(
      rounds.resume(
        { ...BINDING, principal: 'user:default/bob' },
        { requestState: result.requestState, inputResponses: { 'input-1': { action: 'accept' } } },
        new AbortController().signal,
      ),
    ).rejects.toMatchObject({ reason: 'foreign-principal' });
    expect(responses).toEqual([]);
    driven.finish!(TASK);
  });

  it('runs the creation without an asker when no requestState can be sealed', async () => {
    const { rounds } = roundsWith(60_000, false);
    const { driven, run } = drivenCreation();
    const client = new AbortController();
    const answer = rounds.start('jobs', BINDING, client.signal, run);
    expect(driven.askOnGiven).toBe(false);
    expect(driven.signal).toBe(client.signal);
    driven.finish!(TASK);
    expect(await answer).toEqual(TASK);
  });
});
