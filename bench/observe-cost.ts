/**
 * What a request's metrics observations cost in this process, two versions of lib/ops/metrics.ts side
 * by side in one run (the working tree's and a commit's, OBSERVE_BEFORE, HEAD by default): each
 * version's PlatformMetrics filled as the mixed workload fills `npm start`'s (bench/scrape-fill.ts),
 * then the same observations replayed through ServerMetrics, drawn in the proportions of the captured
 * exposition (HTTP durations, GraphQL operations, subgraph fetches, SQL statements). The process's
 * CPU (all threads, garbage collection included) per observation; medians of ROUNDS, the versions
 * taking turns. bench/ops-cost.ts measures a loaded platform; this one compares changes quickly.
 *
 *   nice -n 15 node --import tsx bench/observe-cost.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type * as MetricsModule from '../lib/ops/metrics.js';
import { type CapturedSeries, fillAsCaptured, type MetricsVersion, metricsVersionAt, observerOf, readCapturedExposition } from './scrape-fill.js';
import { markdownTable, median, REPO_ROOT, seededDraws } from './support.js';

const ROUNDS = Number(process.env.OBSERVE_ROUNDS ?? 41);
const OBSERVATIONS = Number(process.env.OBSERVE_COUNT ?? 50_000);

const scratch = mkdtempSync(join(REPO_ROOT, 'bench', '.scrape-'));
try {
  const versions: MetricsVersion[] = [metricsVersionAt(process.env.OBSERVE_BEFORE ?? 'HEAD', scratch), { name: 'working tree', folder: join(REPO_ROOT, 'lib', 'ops') }];
  const captured = readCapturedExposition();
  // The observations to replay: series drawn in proportion to their captured counts, each value one of the series' own.
  const weighted: [CapturedSeries, number][] = [];
  for (const series of captured.histograms) for (const [seconds, times] of series.observations) for (let i = 0; i < times; i += 1) weighted.push([series, seconds]);
  const draws = seededDraws(28);
  const replay = Array.from({ length: OBSERVATIONS }, () => weighted[draws.index(weighted.length)]!);
  const byFamily = new Map<string, number>();
  for (const [series] of replay) byFamily.set(series.family, (byFamily.get(series.family) ?? 0) + 1);
  console.log(
    `Observation cost, ${versions.map((version) => version.name).join(' against ')}: ${OBSERVATIONS} observations a round (${[...byFamily].map(([family, count]) => `${family} ${((100 * count) / OBSERVATIONS).toFixed(0)} %`).join(', ')})`,
  );

  const filled = await Promise.all(
    versions.map(async (version) => {
      const { PlatformMetrics } = (await import(join(version.folder, 'metrics.ts'))) as typeof MetricsModule;
      const metrics = new PlatformMetrics();
      fillAsCaptured(metrics, captured);
      // Each observation's call made beforehand, so that a round times ServerMetrics' methods, little else.
      const observers = new Map(captured.histograms.map((series) => [series, observerOf(metrics, series)]));
      return { version, calls: replay.map(([series, seconds]) => [observers.get(series)!, seconds] as const) };
    }),
  );
  const samples = filled.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS + 2; round += 1) {
    for (let turn = 0; turn < filled.length; turn += 1) {
      const index = (round + turn) % filled.length;
      const { calls } = filled[index]!;
      const before = process.cpuUsage();
      for (const [call, seconds] of calls) call(seconds);
      const used = process.cpuUsage(before);
      // The first two rounds warm the code up.
      if (round >= 2) samples[index]!.push(((used.user + used.system) * 1000) / OBSERVATIONS);
    }
  }
  console.log(
    markdownTable(
      ['version', 'CPU ns / observation (median)', 'min', 'max'],
      filled.map(({ version }, index) => [version.name, median(samples[index]!).toFixed(0), Math.min(...samples[index]!).toFixed(0), Math.max(...samples[index]!).toFixed(0)]),
      ['left', 'right', 'right', 'right'],
    ),
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
