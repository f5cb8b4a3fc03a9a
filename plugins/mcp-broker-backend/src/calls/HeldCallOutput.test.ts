/* HeldCallOutput: what a held call's client requests (legs) see, and what is kept in between. */
import { collectingSink } from './testing/collectingSink';
import { HeldCallOutput } from './HeldCallOutput';

const progress = (token: string | number, n: number) => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: token, progress: n },
});

describe('HeldCallOutput', () => {
  it('answers the first leg with the input_required result and ends it', async () => {
    const first = collectingSink();
    const output = new HeldCallOutput({ sink: first, clientRequestId: 1, progressToken: 'p1' });
    const ended = output.whenLegEnds();
    output.send(progress('p1', 1));
    output.hold({ resultType: 'input_required', requestState: 's' });
    await ended;
    expect(first.messages).toEqual([
      progress('p1', 1),
      { jsonrpc: '2.0', id: 1, result: { resultType: 'input_required', requestState: 's' } },
    ]);
    expect(first.ended).toBe(true);
    expect(output.attached).toBe(false);
  });

  it('keeps the final response and the newest notifications for the next leg, in order', async () => {
    const output = new HeldCallOutput(
      { sink: collectingSink(), clientRequestId: 1, progressToken: 'p1' },
      2,
    );
    output.hold({ resultType: 'input_required' });
    for (const n of [1, 2, 3]) output.send(progress('p1', n));
    output.send({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    output.end();
    expect(output.finished).toBe(true);
    const next = collectingSink();
    await output.resume({ sink: next, clientRequestId: 'retry', progressToken: 'p2' });
    expect(next.messages).toEqual([
      progress('p2', 2),
      progress('p2', 3),
      { jsonrpc: '2.0', id: 'retry', result: { content: [] } },
    ]);
    expect(next.ended).toBe(true);
  });

  it('gives the final response the id of the leg attached when it arrives', () => {
    const output = new HeldCallOutput({ sink: collectingSink(), clientRequestId: 1 });
    output.hold({ resultType: 'input_required' });
    const next = collectingSink();
    void output.resume({ sink: next, clientRequestId: 2 });
    output.send({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'failed' } });
    output.end();
    expect(next.messages).toEqual([
      { jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'failed' } },
    ]);
    expect(next.ended).toBe(true);
  });

  it('leaves progress of other tokens and a leg without a token unchanged', () => {
    const output = new HeldCallOutput({
      sink: collectingSink(),
      clientRequestId: 1,
      progressToken: 7,
    });
    output.hold({ resultType: 'input_required' });
    const next = collectingSink();
    void output.resume({ sink: next, clientRequestId: 2 });
    output.send(progress(7, 1));
    output.send(progress('other', 1));
    expect(next.messages).toEqual([progress(7, 1), progress('other', 1)]);
  });

  it('reports the client going away only while its leg is attached', () => {
    const first = collectingSink();
    const output = new HeldCallOutput({ sink: first, clientRequestId: 1 });
    output.hold({ resultType: 'input_required' });
    first.disconnect(); // the first leg's stream closing is not a cancellation
    expect(output.clientGone.aborted).toBe(false);
    const next = collectingSink();
    void output.resume({ sink: next, clientRequestId: 2 });
    next.disconnect();
    expect(output.clientGone.aborted).toBe(true);
  });

  it('refuses a second leg while one is attached', () => {
    const output = new HeldCallOutput({ sink: collectingSink(), clientRequestId: 1 });
    expect(() => output.resume({ sink: collectingSink(), clientRequestId: 2 })).toThrow(
      /one attached leg/,
    );
  });
});
