/*
 * A line chart as a self-contained SVG file (no dependencies): one or more series of (x, y)
 * points on shared axes, with a title, axis labels and a legend. For the soak benchmark's
 * plots in docs/ (viewable on GitHub and in any browser).
 */

const WIDTH = 720;
const HEIGHT = 300;
const MARGIN = { left: 64, right: 16, top: 36, bottom: 44 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd'];

function escape(text) {
  return String(text).replace(
    /[&<>"]/g,
    c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );
}

/** A round step for about `count` ticks across `span`. */
function tickStep(span, count) {
  const raw = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map(m => m * magnitude).find(step => step >= raw);
}

/**
 * @param {{title: string, xLabel: string, yLabel: string, series: Array<{name: string, points: Array<[number, number]>}>, yMin?: number}} chart
 * @returns {string} the SVG document
 */
export function lineChartSvg(chart) {
  const all = chart.series
    .flatMap(s => s.points)
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const xMax = Math.max(1e-9, ...all.map(([x]) => x));
  const yMin = chart.yMin ?? 0;
  const yMax = Math.max(yMin + 1e-9, ...all.map(([, y]) => y)) * 1.1;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const px = x => MARGIN.left + (x / xMax) * plotW;
  const py = y => MARGIN.top + plotH - ((y - yMin) / (yMax - yMin)) * plotH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="18" text-anchor="middle" font-size="13">${escape(chart.title)}</text>`,
  ];
  const yStep = tickStep(yMax - yMin, 5);
  for (let y = Math.ceil(yMin / yStep) * yStep; y <= yMax; y += yStep) {
    parts.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 6}" y="${py(y) + 4}" text-anchor="end">${+y.toFixed(6)}</text>`,
    );
  }
  const xStep = tickStep(xMax, 8);
  for (let x = 0; x <= xMax; x += xStep) {
    parts.push(
      `<line x1="${px(x)}" x2="${px(x)}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 4}" stroke="#333"/>`,
      `<text x="${px(x)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${+x.toFixed(6)}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 8}" text-anchor="middle">${escape(chart.xLabel)}</text>`,
    `<text x="14" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 14 ${MARGIN.top + plotH / 2})">${escape(chart.yLabel)}</text>`,
  );
  chart.series.forEach((series, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const d = series.points
      .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y))
      .map(([x, y], j) => `${j === 0 ? 'M' : 'L'}${px(x).toFixed(1)},${py(y).toFixed(1)}`)
      .join(' ');
    parts.push(
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>`,
      `<rect x="${MARGIN.left + 10 + i * 150}" y="${MARGIN.top + 4}" width="12" height="3" fill="${colour}"/>`,
      `<text x="${MARGIN.left + 26 + i * 150}" y="${MARGIN.top + 9}">${escape(series.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
