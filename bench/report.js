// The benchmark's written report: docs/benchmarks.md (tables) and an SVG bar chart of the ratios, drawn here
// as plain SVG text (a dozen bars; a charting library would bring a browser or canvas for that).

const escape = (text) =>
  String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/** Horizontal bars of the throughput ratio per route, with the 0.9 target and parity marked. */
export function ratioChart(
  rows,
  {
    title = 'Service throughput ÷ bare implementation (same routes, same bodies)',
    marks = [
      [0.9, '0.9'],
      [1, '1.0'],
    ],
    legend = 'green: at or above its target (0.8 for the cheap reads; 0.5 for health; 5 for the two total-bound lists; 0.9 otherwise); red: below',
  } = {},
) {
  const barHeight = 22;
  const gap = 8;
  const left = 330;
  const width = 900;
  const plot = width - left - 60;
  const top = 40;
  const max = Math.max(1.2, ...rows.map((row) => row.ratio)) * 1.05;
  const x = (value) => left + (value / max) * plot;
  const height = top + rows.length * (barHeight + gap) + 40;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${escape(title)}</text>`,
  ];
  rows.forEach((row, i) => {
    const y = top + i * (barHeight + gap);
    const colour = row.ratio >= (row.target ?? 0.9) ? '#2e7d32' : '#c62828';
    parts.push(
      `<text x="${left - 8}" y="${y + barHeight * 0.7}" text-anchor="end">${escape(row.route)}</text>`,
      `<rect x="${left}" y="${y}" width="${Math.max(1, x(row.ratio) - left).toFixed(1)}" height="${barHeight}" fill="${colour}"/>`,
      `<text x="${(x(row.ratio) + 4).toFixed(1)}" y="${y + barHeight * 0.7}">${row.ratio.toFixed(2)}</text>`,
    );
  });
  const bottom = top + rows.length * (barHeight + gap);
  for (const [value, label] of marks) {
    parts.push(
      `<line x1="${x(value).toFixed(1)}" y1="${top - 6}" x2="${x(value).toFixed(1)}" y2="${bottom}" stroke="#333" stroke-dasharray="4 3"/>`,
      `<text x="${x(value).toFixed(1)}" y="${bottom + 16}" text-anchor="middle">${label}</text>`,
    );
  }
  parts.push(`<text x="${left}" y="${bottom + 34}" fill="#555">${escape(legend)}</text>`, '</svg>');
  return parts.join('\n') + '\n';
}

const fmt = (value, digits = 0) =>
  value === undefined || value === null ? '–' : Number(value).toFixed(digits);

/** The markdown table of a run. */
export function resultTable(rows) {
  const lines = [
    '| route | service req/s | bare req/s | ratio | service p50 / p99 ms | bare p50 / p99 ms | p99 ratio | CPU µs/request service / bare | peak RSS MiB service / bare | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.route} | ${fmt(row.service.rps)} | ${fmt(row.bare.rps)} | **${fmt(row.ratio, 2)}** | ` +
        `${fmt(row.service.p50, 1)} / ${fmt(row.service.p99, 1)} | ${fmt(row.bare.p50, 1)} / ${fmt(row.bare.p99, 1)} | ` +
        `${fmt(row.p99Ratio, 2)} | ${fmt(row.service.cpuUs)} / ${fmt(row.bare.cpuUs)} | ` +
        `${fmt(row.peakRssMiB?.service)} / ${fmt(row.peakRssMiB?.bare)} | ${row.verdict} |`,
    );
  }
  return lines.join('\n');
}

export function curveTable(curve) {
  const lines = [
    '| modules | rare word: service p50 / p99 ms | bare p50 / p99 ms | common word: service p50 / p99 ms | bare p50 / p99 ms |',
    '| ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const point of curve) {
    const cell = (m) => `${fmt(m.p50, 2)} / ${fmt(m.p99, 2)}`;
    lines.push(
      `| ${point.modules.toLocaleString('en')} | ${cell(point.rare.service)} | ${cell(point.rare.bare)} | ` +
        `${cell(point.common.service)} | ${cell(point.common.bare)} |`,
    );
  }
  return lines.join('\n');
}
