/*
 * A bar chart of our own (no chart library): one bar per day, stacked by series, and an optional
 * line (errors) over them. The SVG has a <title> and is described by the data table below it,
 * which holds the same numbers — that table is what screen readers and tests read. Sighted
 * readers get each day's numbers on hover (a <title> per bar), the first and last day under the
 * chart, and the table on demand (a disclosure, closed at first: 30 to 90 rows of mostly zeros
 * would push the page's own tables far down).
 */
import { Box, Flex, Text } from '@backstage/ui';
import { useId } from 'react';

/** One stacked series (or the line): a name and a value per day, in the chart's day order. */
export interface UsageChartSeries {
  name: string;
  values: number[];
}

/** Colours of the stacked series in order (distinguishable, 3:1 or more on white), then repeated. */
const PALETTE = ['#1f6fb2', '#b35806', '#2d8a4e', '#7b3fa0', '#a3283f', '#38727a', '#6b6b00'];
const LINE_COLOUR = '#c62828';
const HEIGHT = 160;
const BAR = 18;
const GAP = 6;

/**
 * A stacked bar chart per day with its data table. `days` are the x axis (`YYYY-MM-DD`); each
 * of `stacks` has one value per day; `line`, when given, is drawn as a line with points.
 */
export function UsageChart(props: {
  title: string;
  days: string[];
  stacks: UsageChartSeries[];
  line?: UsageChartSeries;
}) {
  const { title, days, stacks, line } = props;
  const tableId = useId();
  const totals = days.map((_, day) => stacks.reduce((sum, series) => sum + series.values[day], 0));
  const max = Math.max(1, ...totals, ...(line?.values ?? []));
  const scale = (value: number) => (value / max) * (HEIGHT - 10);
  const width = days.length * (BAR + GAP) + GAP;
  return (
    <Box>
      <svg
        role="img"
        aria-describedby={tableId}
        viewBox={`0 0 ${width} ${HEIGHT}`}
        width="100%"
        height={HEIGHT}
        preserveAspectRatio="none"
      >
        <title>{title}</title>
        {days.map((day, index) => {
          let base = HEIGHT;
          const x = GAP + index * (BAR + GAP);
          return (
            <g key={day}>
              <title>{dayText(day, index, stacks, line)}</title>
              {stacks.map((series, s) => {
                const h = scale(series.values[index]);
                base -= h;
                return h === 0 ? null : (
                  <rect
                    key={series.name}
                    x={x}
                    y={base}
                    width={BAR}
                    height={h}
                    fill={PALETTE[s % PALETTE.length]}
                  />
                );
              })}
            </g>
          );
        })}
        {line !== undefined && (
          <polyline
            fill="none"
            stroke={LINE_COLOUR}
            strokeWidth={2}
            points={line.values
              .map(
                (value, index) => `${GAP + index * (BAR + GAP) + BAR / 2},${HEIGHT - scale(value)}`,
              )
              .join(' ')}
          />
        )}
      </svg>
      {days.length > 0 && (
        <Flex justify="between" aria-hidden="true">
          <Text variant="body-small" color="secondary">
            {days[0]}
          </Text>
          <Text variant="body-small" color="secondary">
            {days[days.length - 1]}
          </Text>
        </Flex>
      )}
      <Legend stacks={stacks} line={line} />
      <details>
        <summary>
          <Text variant="body-small">Show the numbers per day</Text>
        </summary>
        <table id={tableId} className="portal-usage-table">
          <caption>
            <Text variant="body-small" color="secondary">
              {title}, per day (UTC)
            </Text>
          </caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {stacks.map(series => (
                <th scope="col" key={series.name}>
                  {series.name}
                </th>
              ))}
              {line !== undefined && <th scope="col">{line.name}</th>}
            </tr>
          </thead>
          <tbody>
            {days.map((day, index) => (
              <tr key={day}>
                <th scope="row">{day}</th>
                {stacks.map(series => (
                  <td key={series.name}>{series.values[index].toLocaleString('en')}</td>
                ))}
                {line !== undefined && <td>{line.values[index].toLocaleString('en')}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </Box>
  );
}

function Legend(props: { stacks: UsageChartSeries[]; line?: UsageChartSeries }) {
  return (
    <ul aria-hidden="true" style={{ display: 'flex', flexWrap: 'wrap', gap: 12, padding: 0 }}>
      {props.stacks.map((series, s) => (
        <li key={series.name} style={{ listStyle: 'none', display: 'flex', gap: 4 }}>
          <span style={{ width: 12, height: 12, background: PALETTE[s % PALETTE.length] }} />
          <Text variant="body-small">{series.name}</Text>
        </li>
      ))}
      {props.line !== undefined && (
        <li style={{ listStyle: 'none', display: 'flex', gap: 4 }}>
          <span style={{ width: 12, height: 2, marginTop: 5, background: LINE_COLOUR }} />
          <Text variant="body-small">{props.line.name}</Text>
        </li>
      )}
    </ul>
  );
}

/** What a day's bar says on hover: `2026-11-29: example 3, other 1; Errors 0`. */
function dayText(
  day: string,
  index: number,
  stacks: UsageChartSeries[],
  line: UsageChartSeries | undefined,
): string {
  const values = stacks
    .map(series => `${series.name} ${series.values[index].toLocaleString('en')}`)
    .join(', ');
  const lineText =
    line === undefined ? '' : `; ${line.name} ${line.values[index].toLocaleString('en')}`;
  return `${day}: ${values || 'no calls'}${lineText}`;
}
