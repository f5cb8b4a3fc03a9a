import {
  clientTraceContext,
  MAX_TRACESTATE_LENGTH,
  MAX_TRACESTATE_MEMBERS,
  validTraceparent,
  validTracestate,
  withTraceMeta,
} from './traceContext';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;
const OTHER = `00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01`;

describe('the client trace context (contract tasks-and-apps §4)', () => {
  it('accepts a W3C traceparent and nothing else', () => {
    expect(validTraceparent(VALID)).toBe(VALID);
    for (const invalid of [
      undefined,
      42,
      '',
      VALID.toUpperCase(),
      `${VALID}-extra`, // version 00 is exactly 55 characters
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}`,
    ]) {
      expect(validTraceparent(invalid)).toBeUndefined();
    }
    // A higher version is read from its first 55 characters when a '-' or the end follows.
    expect(validTraceparent(`01-${TRACE}-${SPAN}-01-future`)).toBe(VALID);
    expect(validTraceparent(`01-${TRACE}-${SPAN}-01x`)).toBeUndefined();
  });

  it('keeps a tracestate within 32 members and 512 characters, long members first out', () => {
    const members = Array.from({ length: 40 }, (_, i) => `v${i}=x`);
    expect(validTracestate(members.join(' , '))).toBe(
      members.slice(0, MAX_TRACESTATE_MEMBERS).join(','),
    );
    expect(validTracestate(['a=1', 'b=2'])).toBe('a=1,b=2');
    // 600 characters: the 200-character member goes first, though it is not last.
    const long = `big=${'z'.repeat(196)}`;
    const rest = Array.from({ length: 4 }, (_, i) => `k${i}=${'y'.repeat(96)}`);
    const kept = validTracestate([rest[0], long, ...rest.slice(1)].join(','))!;
    expect(kept).toBe(rest.join(','));
    expect(kept.length).toBeLessThanOrEqual(MAX_TRACESTATE_LENGTH);
  });

  it('discards a tracestate that breaks the grammar or repeats a key, whole', () => {
    expect(validTracestate('a=1,a=2')).toBeUndefined();
    expect(validTracestate('a=1,Upper=2')).toBeUndefined();
    expect(validTracestate('a=1,novalue')).toBeUndefined();
    expect(validTracestate('a=has,comma=')).toBeUndefined();
    expect(validTracestate('tenant@system=1,b=2')).toBe('tenant@system=1,b=2');
    expect(validTracestate('')).toBeUndefined();
  });

  it('prefers a valid _meta context, links a differing valid header, never mixes carriers', () => {
    expect(
      clientTraceContext(
        { traceparent: OTHER, tracestate: 'h=1' },
        { traceparent: VALID, tracestate: 'm=1' },
      ),
    ).toEqual({
      carrier: { traceparent: VALID, tracestate: 'm=1' },
      link: { traceparent: OTHER, tracestate: 'h=1' },
    });
    // The same context in both: no link.
    expect(clientTraceContext({ traceparent: VALID }, { traceparent: VALID })).toEqual({
      carrier: { traceparent: VALID },
    });
    // An invalid _meta value falls back to the header, with the header's tracestate only.
    expect(
      clientTraceContext(
        { traceparent: OTHER, tracestate: 'h=1' },
        { traceparent: 'nope', tracestate: 'm=1' },
      ),
    ).toEqual({ carrier: { traceparent: OTHER, tracestate: 'h=1' } });
    expect(clientTraceContext({ traceparent: 'nope' }, undefined)).toEqual({ carrier: {} });
  });

  it('replaces the client’s _meta trace keys with the broker’s, drops baggage, keeps the rest', () => {
    const params = {
      name: 'echo',
      _meta: { traceparent: OTHER, tracestate: 'c=1', baggage: 'user=alice', progressToken: 7 },
    };
    expect(withTraceMeta(params, { traceparent: VALID })).toEqual({
      name: 'echo',
      _meta: { progressToken: 7, traceparent: VALID },
    });
    // Tracing off: the client's keys still do not pass; an emptied _meta goes.
    expect(withTraceMeta({ name: 'echo', _meta: { baggage: 'b=1' } }, undefined)).toEqual({
      name: 'echo',
    });
    const untouched = { name: 'echo', _meta: { progressToken: 1 } };
    expect(withTraceMeta(untouched, {})).toBe(untouched);
  });
});
