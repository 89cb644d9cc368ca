// docs/benchmarks.md (or bench/results/latest.md) from a run's report.
import { curveTable, resultTable } from '../report.js';

/** Where the service's memory was at the highest of the routes' peaks (the sample with the largest RSS). */
export function peakBreakdown(rows) {
  const top = rows
    .filter((row) => row.peakRssMiB?.atPeak)
    .sort((a, b) => b.peakRssMiB.service - a.peakRssMiB.service)[0];
  if (!top) return '';
  const at = top.peakRssMiB.atPeak;
  return (
    ` The service's highest peak was under ${top.route} (${top.peakRssMiB.service} MiB; bare ${top.peakRssMiB.bare}); ` +
    `sampled near it every 20 ms: RSS ${at.rss} MiB, V8 heap ${at.heapTotal} MiB (${at.heapUsed} used, of ` +
    `which ${at.largeObjectsUsed} MiB in large-object space: strings and arrays over V8's large-object size, ` +
    `freed only by a full collection), ` +
    `external ${at.external} MiB (array buffers ${at.arrayBuffers}).`
  );
}

export function benchmarksMarkdown(report) {
  const r = report;
  const lines = [
    '# Benchmarks',
    '',
    `Written by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC ` +
      `(see [bench/README.md](../bench/README.md) for how it measures). ${r.machine.cpus} CPUs (${r.machine.cpuModel}), ` +
      `Node ${r.machine.node}, ${r.database.kind} PostgreSQL ${r.database.serverVersion}; load average ` +
      `${r.machine.loadAverageBefore.join(' / ')} before and ${r.machine.loadAverageAfter.join(' / ')} after the run ` +
      '(the machine is shared: read the ratios, not the absolute figures).',
    '',
    `Data: ${r.seed.users} users, ${r.seed.modules} modules, ${r.seed.roles} role rows (generated in ${r.seed.seconds} s). ` +
      `Load: ${r.load.connections} connections over loopback, ${r.load.rounds} alternating rounds of ${r.load.seconds} s ` +
      `per side and route after ${r.load.warmup} s of warm-up; both sides use a pool of ${r.load.poolSize} connections.`,
    '',
    '![ratios](images/benchmark-ratios.svg)',
    '',
    resultTable(r.results),
    '',
    `ratio = service req/s ÷ bare req/s; p99 ratio = service p99 ÷ bare p99. Peak RSS under this load: service ` +
      `${r.peakRssMiB.service} MiB, bare ${r.peakRssMiB.bare} MiB (target ≤ 200 MiB: ` +
      `${r.peakRssMiB.service <= 200 ? 'met' : 'not met'}).` +
      (r.peakRssMiB.serviceNow
        ? ` The service after the load: RSS ${r.peakRssMiB.serviceNow.rss} MiB, V8 heap ${r.peakRssMiB.serviceNow.heapTotal} MiB ` +
          `(${Object.entries(r.peakRssMiB.serviceNow.spaces)
            .filter(([, mib]) => mib > 0)
            .map(([space, mib]) => `${space} ${mib}`)
            .join(', ')}), external ${r.peakRssMiB.serviceNow.external} MiB.`
        : '') +
      peakBreakdown(r.results),
    '',
  ];
  if (r.bulkDelete)
    lines.push(
      `Bulk delete (\`DELETE /api/modules/bulk\`, one request) of ${r.bulkDelete.modules} modules, each with ` +
        `${r.bulkDelete.rolesPerModule} role rows, an assignment and a 1 KiB file in storage, checked gone ` +
        `afterwards: ${r.bulkDelete.rounds.join(' / ')} ms in ${r.bulkDelete.rounds.length} rounds, median ` +
        `${r.bulkDelete.medianMs} ms (target ≤ 1 000 ms: ${r.bulkDelete.medianMs <= 1000 ? 'met' : 'not met'}).`,
      '',
      `Change events: \`POST /api/modules\` (admin, 8 connections, alternating rounds) with the module's ` +
        `\`module.created\` event written in its transaction against the same create with the recorder switched ` +
        `off in the service: ${r.changeEvents.with.rps.toFixed(0)} req/s (p50 ${r.changeEvents.with.p50.toFixed(1)} ms, ` +
        `p99 ${r.changeEvents.with.p99.toFixed(1)} ms) against ${r.changeEvents.without.rps.toFixed(0)} req/s (p50 ` +
        `${r.changeEvents.without.p50.toFixed(1)} ms, p99 ${r.changeEvents.without.p99.toFixed(1)} ms): ratio ` +
        `${r.changeEvents.ratio.toFixed(2)}, p99 ratio ${r.changeEvents.p99Ratio.toFixed(2)} (target: within 10 %: ` +
        `${r.changeEvents.ratio >= 0.9 ? 'met' : 'not met'}). CPU µs per create, with / without: service ` +
        `${r.changeEvents.with.serviceCpuUs.toFixed(0)} / ${r.changeEvents.without.serviceCpuUs.toFixed(0)}, ` +
        `PostgreSQL ${r.changeEvents.with.postgresCpuUs.toFixed(0)} / ${r.changeEvents.without.postgresCpuUs.toFixed(0)}.`,
      '',
      `Single sign-on: \`${r.idpToken.route}\` on the service with the identity provider's access token (RS256, ` +
        `docs/sso.md) against the service's own token, alternating rounds: ${r.idpToken.idp.rps.toFixed(0)} req/s ` +
        `(p50 ${r.idpToken.idp.p50.toFixed(1)} ms, p99 ${r.idpToken.idp.p99.toFixed(1)} ms) against ` +
        `${r.idpToken.local.rps.toFixed(0)} req/s (p50 ${r.idpToken.local.p50.toFixed(1)} ms, p99 ` +
        `${r.idpToken.local.p99.toFixed(1)} ms): ratio ${r.idpToken.ratio.toFixed(2)}, p99 ratio ` +
        `${r.idpToken.p99Ratio.toFixed(2)} (target: no slower than a local token after its first use, within ` +
        `the noise of a shared machine).`,
      '',
    );
  if (r.curve.length > 0) {
    lines.push(
      '## Search latency by number of modules',
      '',
      'One connection (no queueing), admin, 5 000 users, no role rows; p50 / p99 in ms.',
      '',
      curveTable(r.curve),
      '',
    );
  }
  return lines.join('\n');
}
