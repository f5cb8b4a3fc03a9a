import { daysBetween, seriesBy, totalSeries, totalsBy, windowText } from './usageSeries';

const row = (
  day: string,
  server: string,
  tool: string,
  calls: number,
  errors = 0,
  rateLimited = 0,
) => ({
  day,
  server,
  tool,
  calls,
  errors,
  rateLimited,
});

describe('usageSeries', () => {
  it('lists every UTC day of a period, across a month end', () => {
    expect(daysBetween('2026-11-29', '2026-12-02')).toEqual([
      '2026-11-29',
      '2026-11-30',
      '2026-12-01',
      '2026-12-02',
    ]);
  });

  it('sums a series per key and day, with zero for days without calls, and ignores rows outside the period', () => {
    const days = daysBetween('2026-11-27', '2026-11-29');
    const rows = [
      row('2026-11-27', 'example', 'echo', 2),
      row('2026-11-27', 'example', 'count', 3),
      row('2026-11-29', 'backstage', 'catalog_get', 4),
      row('2026-11-20', 'example', 'echo', 100),
    ];
    expect(
      seriesBy(
        rows,
        days,
        r => r.server,
        r => r.calls,
      ),
    ).toEqual([
      { name: 'backstage', values: [0, 0, 4] },
      { name: 'example', values: [5, 0, 0] },
    ]);
    expect(totalSeries('all', rows, days, r => r.calls)).toEqual({
      name: 'all',
      values: [5, 0, 4],
    });
    expect(totalSeries('none', [] as ReturnType<typeof row>[], days, r => r.calls)).toEqual({
      name: 'none',
      values: [0, 0, 0],
    });
  });

  it('keeps groups apart whose joined names would read alike', () => {
    const totals = totalsBy(
      [row('2026-11-28', 'a/b', 'c', 1), row('2026-11-28', 'a', 'b/c', 2)],
      r => ({ server: r.server, tool: r.tool }),
    );
    expect(totals.map(t => [t.server, t.tool, t.calls])).toEqual([
      ['a', 'b/c', 2],
      ['a/b', 'c', 1],
    ]);
  });

  it('totals per key by calls, then by key', () => {
    const totals = totalsBy(
      [
        row('2026-11-27', 'example', 'echo', 2, 1, 0),
        row('2026-11-28', 'example', 'echo', 3, 0, 2),
        row('2026-11-28', 'example', 'count', 5),
        row('2026-11-28', 'a', 'b', 5),
      ],
      r => ({ server: r.server, tool: r.tool }),
    );
    expect(totals).toEqual([
      { id: '["a","b"]', server: 'a', tool: 'b', calls: 5, errors: 0, rateLimited: 0 },
      {
        id: '["example","count"]',
        server: 'example',
        tool: 'count',
        calls: 5,
        errors: 0,
        rateLimited: 0,
      },
      {
        id: '["example","echo"]',
        server: 'example',
        tool: 'echo',
        calls: 5,
        errors: 1,
        rateLimited: 2,
      },
    ]);
  });

  it('says quota windows in words', () => {
    expect(windowText(60_000)).toBe('minute');
    expect(windowText(3_600_000)).toBe('hour');
    expect(windowText(86_400_000)).toBe('day (UTC)');
    expect(windowText(90_000)).toBe('90 s');
  });
});
