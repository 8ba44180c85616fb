/**
 * A PlatformMetrics filled as the platform's mixed workload fills it, for bench/scrape-cost.ts: every
 * series of an exposition that `npm start` served after the workload (bench/data/mixed-workload.prom,
 * captured by `node --import tsx bench/scrape-cost.ts --capture`) is observed again through
 * ServerMetrics' own methods, each histogram's observations in the buckets they fell in. Works on any
 * version of lib/ops/metrics.ts that has this interface, so that two versions can be compared.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import type { ServerName } from '../lib/config/services.js';
import type { PlatformMetrics } from '../lib/ops/metrics.js';
import { REPO_ROOT, seededDraws } from './support.js';

export const CAPTURED_EXPOSITION = join(REPO_ROOT, 'bench', 'data', 'mixed-workload.prom');

/** One histogram series of the captured exposition: its labels and its observations by bucket. */
export interface CapturedSeries {
  family: string;
  labels: Record<string, string>;
  /** [value to observe, times] for each bucket with observations. */
  observations: [number, number][];
}

interface Captured {
  histograms: CapturedSeries[];
  counters: { family: string; labels: Record<string, string>; value: number }[];
  pools: { server: string; used: number; idle: number }[];
}

const labelsOf = (text: string): Record<string, string> => Object.fromEntries([...text.matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, name, value]) => [name!, value!]));

export function readCapturedExposition(path = CAPTURED_EXPOSITION): Captured {
  const byKey = new Map<string, { family: string; labels: Record<string, string>; buckets: [number, number][] }>();
  const counters: Captured['counters'] = [];
  const pools = new Map<string, { server: string; used: number; idle: number }>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const sample = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) continue;
    const [, name, labelText = '', value] = sample;
    if (/^(nodejs|process)_/.test(name!)) continue;
    const labels = labelsOf(labelText);
    if (name!.endsWith('_bucket')) {
      const { le, ...seriesLabels } = labels;
      const family = name!.slice(0, -'_bucket'.length);
      const key = `${family}${JSON.stringify(seriesLabels)}`;
      let series = byKey.get(key);
      if (!series) byKey.set(key, (series = { family, labels: seriesLabels, buckets: [] }));
      series.buckets.push([le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), Number(value)]);
    } else if (name!.startsWith('passport_') && name!.endsWith('_total')) {
      counters.push({ family: name!, labels, value: Number(value) });
    } else if (name === 'db_client_connections_usage') {
      let pool = pools.get(labels.server!);
      if (!pool) pools.set(labels.server!, (pool = { server: labels.server!, used: 0, idle: 0 }));
      pool[labels.db_client_connection_state as 'used' | 'idle'] = Number(value);
    }
  }
  const histograms = [...byKey.values()].map(({ family, labels, buckets }) => {
    const observations: [number, number][] = [];
    let below = 0;
    let counted = 0;
    for (const [bound, cumulative] of buckets) {
      // An observation in the middle of its bucket (past the last bound: 1.5 times it).
      if (cumulative > counted) observations.push([Number.isFinite(bound) ? (below + bound) / 2 : below * 1.5, cumulative - counted]);
      counted = cumulative;
      if (Number.isFinite(bound)) below = bound;
    }
    return { family, labels, observations };
  });
  return { histograms, counters, pools: [...pools.values()] };
}

type ServerMetrics = ReturnType<PlatformMetrics['forServer']>;
const madeServers = new WeakMap<PlatformMetrics, Map<string, ServerMetrics>>();
/** Each server's ServerMetrics made once, as the platform makes them. */
function serverOf(metrics: PlatformMetrics, server: string): ServerMetrics {
  let servers = madeServers.get(metrics);
  if (!servers) madeServers.set(metrics, (servers = new Map()));
  let found = servers.get(server);
  if (!found) servers.set(server, (found = metrics.forServer(server as ServerName)));
  return found;
}

/** Observes values into a captured histogram series through the server's metrics, its labels' values read once. */
export function observerOf(metrics: PlatformMetrics, series: CapturedSeries): (seconds: number) => void {
  const { labels } = series;
  const server = serverOf(metrics, labels.server!);
  switch (series.family) {
    case 'http_server_request_duration_seconds': {
      const [route, method, status] = [labels.http_route!, labels.http_request_method!, Number(labels.http_response_status_code)];
      return (seconds) => server.httpRequestDone(route, method, status, seconds);
    }
    case 'graphql_server_operation_duration_seconds': {
      const [name, type, outcome] = [labels.graphql_operation_name || null, labels.graphql_operation_type!, labels.outcome as 'success' | 'error'];
      return (seconds) => server.graphqlOperationDone(name, type, outcome, seconds);
    }
    case 'graphql_gateway_subgraph_fetch_duration_seconds': {
      const [subgraph, outcome] = [labels.subgraph!, labels.outcome as 'success' | 'error'];
      return (seconds) => server.subgraphFetchDone(subgraph, outcome, seconds, 'ECONNREFUSED');
    }
    case 'db_client_operation_duration_seconds': {
      const [sql, failed] = [`${labels.db_operation_name} 1`, labels.outcome === 'error'];
      return (seconds) => server.databaseQueryDone(sql, seconds, failed);
    }
    default:
      throw new Error(`no way to observe ${series.family}`);
  }
}

/** Observes one value into a captured histogram series through the server's metrics. */
function observe(metrics: PlatformMetrics, series: CapturedSeries, seconds: number): void {
  observerOf(metrics, series)(seconds);
}

/**
 * Fills `metrics` with the captured series; returns a function that observes `count` more values in
 * series drawn with a fixed seed (traffic between two scrapes, so that no two scrapes read alike).
 */
export function fillAsCaptured(metrics: PlatformMetrics, captured = readCapturedExposition()): (count: number) => void {
  for (const series of captured.histograms) for (const [seconds, times] of series.observations) for (let i = 0; i < times; i += 1) observe(metrics, series, seconds);
  for (const { family, labels, value } of captured.counters) {
    const domain = serverOf(metrics, labels.server!).domain;
    if (family === 'passport_passports_created_total') {
      domain.passportsCreated(value);
      continue;
    }
    for (let i = 0; i < value; i += 1) {
      if (family === 'passport_events_appended_total') domain.eventAppended(labels.event_type!);
      else if (family === 'passport_packs_minted_total') domain.packMinted();
      else if (family === 'passport_verdicts_total') domain.verdictGiven(labels.outcome!);
      else if (family === 'passport_delegations_total') domain.delegationJudged(labels.outcome as 'accepted' | 'refused', labels.code!);
      else if (family === 'passport_revocations_total') domain.revocationRecorded();
      else if (family === 'passport_snapshots_total') domain.snapshotTaken();
      else if (family === 'passport_key_standing_answers_total') domain.keyStandingAnswered(labels.standing!);
      else if (family === 'passport_key_placement_failures_total') domain.keyPlacementFailed(labels.stage as 'start' | 'rotation');
    }
  }
  // The pools as they stood (pg.Pool's three counts are all a scrape reads of a pool).
  for (const { server, used, idle } of captured.pools) serverOf(metrics, server).watchPool({ totalCount: used + idle, idleCount: idle, waitingCount: 0 } as pg.Pool);
  // Readiness as an orchestrator's probes leave it.
  for (const server of ['facade', 'gateway', 'trust', 'registry', 'issuer', 'archive'] as const)
    serverOf(metrics, server).readinessProbed(server === 'facade' ? ['gateway'] : ['database', 'keys'], {});
  const draws = seededDraws(28);
  return (count) => {
    for (let i = 0; i < count; i += 1) {
      const series = captured.histograms[draws.index(captured.histograms.length)]!;
      const [seconds] = series.observations[draws.index(series.observations.length)]!;
      observe(metrics, series, seconds * (0.5 + draws.index(1000) / 1000));
    }
  };
}

/** A version of lib/ops/metrics.ts and the files beside it that it needs: its name and its folder. */
export interface MetricsVersion {
  name: string;
  folder: string;
}

/** The version of a commit, its files in a folder of their own beside lib/ (so that their imports resolve); histograms.ts where the commit has it. */
export function metricsVersionAt(commit: string, root: string): MetricsVersion {
  const folder = mkdtempSync(join(root, 'scrape-'));
  const files = execFileSync('git', ['-C', REPO_ROOT, 'ls-tree', '--name-only', commit, 'lib/ops/'], { encoding: 'utf8' }).split('\n');
  for (const file of ['metrics.ts', 'metrics-listener.ts', 'histograms.ts'].filter((name) => files.includes(`lib/ops/${name}`))) {
    const text = execFileSync('git', ['-C', REPO_ROOT, 'show', `${commit}:lib/ops/${file}`], { encoding: 'utf8' });
    writeFileSync(join(folder, file), text.replaceAll("'../config/", `'${join(REPO_ROOT, 'lib', 'config')}/`));
  }
  return { name: `${commit} (${execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short', commit], { encoding: 'utf8' }).trim()})`, folder };
}
