/**
 * The platform's Prometheus metrics under one process (startTestStack): one exposition off the public
 * ports with a series of each of the six servers, that `promtool check metrics` accepts; domain
 * counters counted where the outcome is known; labels bounded (10,000 distinct passports add no
 * series, free operation names stop at a cap); a real Prometheus scrapes it and reads each server
 * back; the alert rules pass `promtool check rules`, and every metric they and the dashboard name is
 * in the exposition.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_NAME_LIMIT } from '../../lib/ops/metrics.js';
import { appendEvent, createModel, createPassport } from '../issuer/support.js';
import { checkMetrics, PROMTOOL, startPrometheus } from '../support/prometheus.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/** Issue 28 asks for 10,000 distinct passports: a label per id would show at the second already, but the requirement is the count. */
const DISTINCT_PASSPORTS = 10_000;
const SERVERS = ['facade', 'gateway', 'trust', 'registry', 'issuer', 'archive'];
let platform: TestStack;

beforeAll(async () => {
  platform = await startTestStack();
}, 300_000);

afterAll(async () => {
  await platform?.stop();
});

const scrape = async () => {
  const response = await fetch(platform.stack.metrics.url);
  expect(response.status).toBe(200);
  return response.text();
};

/** The value of one series in an exposition (0 when absent). */
function sampleOf(exposition: string, series: string): number {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Series of the platform's own metrics (Node's process metrics left out: the GC adds its kinds as it runs). */
const platformSeries = (exposition: string) =>
  exposition
    .split('\n')
    .filter((line) => line && !line.startsWith('#') && !/^(nodejs|process)_/.test(line))
    .map((line) => line.slice(0, line.lastIndexOf(' ')));

/** Metric names an exposition declares, from its # TYPE lines. */
const declaredNames = (exposition: string) =>
  new Set([...exposition.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!])));

describe('metrics of the whole platform in one process', () => {
  it('serves them off the public ports, one series set per server, and promtool accepts the exposition', async () => {
    // Domain outcomes: a passport created, an event, a pack, a verdict (with key standings), a snapshot, a refused delegation, a revocation.
    await createModel(platform, 'metrics-battery');
    const passport = await createPassport(platform, 'metrics-battery');
    expect((await appendEvent(platform, passport.passport_id, 'activated', { placed_on_market_at: '2025-02-01T00:00:00Z' })).status).toBe(201);
    expect((await platform.rest('issuer', `/passports/${passport.passport_id}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
    expect((await platform.rest('issuer', `/passports/${passport.passport_id}/verdict`)).body.outcome).toBe('verified');
    expect((await platform.rest('archive', '/snapshots', { body: { passport_id: passport.passport_id }, as: 'writer' })).status).toBe(201);
    expect((await platform.rest('trust', '/edges', { body: { credential: 'not.a.credential' }, as: 'admin' })).status).toBe(422);
    expect((await platform.rest('trust', '/nodes', { body: { id: 'metrics-witness', kind: 'witness' }, as: 'admin' })).status).toBe(201);
    expect((await platform.rest('trust', '/revocations', { body: { subject: 'metrics-witness', reason: 'superseded' }, as: 'admin' })).status).toBe(201);

    // Not on the public ports.
    expect((await fetch(`${platform.stack.facade.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${platform.stack.gateway.url}/metrics`)).status).toBe(404);
    const exposition = await scrape();
    for (const server of SERVERS) expect(exposition, server).toMatch(new RegExp(`^http_server_request_duration_seconds_count\\{server="${server}",`, 'm'));
    expect(sampleOf(exposition, 'passport_passports_created_total{server="issuer"}')).toBe(1);
    expect(sampleOf(exposition, 'passport_events_appended_total{server="issuer",event_type="activated"}')).toBe(1);
    expect(sampleOf(exposition, 'passport_packs_minted_total{server="issuer"}')).toBe(1);
    // The one asked, and the one the snapshot gathers with the passport.
    expect(sampleOf(exposition, 'passport_verdicts_total{server="issuer",outcome="verified"}')).toBe(2);
    expect(sampleOf(exposition, 'passport_snapshots_total{server="archive"}')).toBe(1);
    expect(sampleOf(exposition, 'passport_revocations_total{server="trust"}')).toBe(1);
    expect(exposition).toMatch(/^passport_delegations_total\{server="trust",outcome="refused",code="[A-Z_]+"\} 1$/m);
    expect(sampleOf(exposition, 'passport_key_standing_answers_total{server="trust",standing="valid"}')).toBeGreaterThan(0);
    // The route template, never the passport's id.
    expect(exposition).toContain('http_route="/issuer/passports/:id/verdict"');
    expect(exposition).not.toContain(passport.passport_id);
    expect(exposition).toMatch(/^graphql_server_operation_duration_seconds_count\{server="gateway",graphql_operation_name="\w+",graphql_operation_type="mutation",outcome="success"\}/m);
    expect(exposition).toMatch(/^graphql_gateway_subgraph_fetch_duration_seconds_count\{server="gateway",subgraph="issuer",outcome="success"\}/m);
    expect(exposition).toMatch(/^db_client_operation_duration_seconds_count\{server="issuer",db_system_name="postgresql",db_operation_name="SELECT",outcome="success"\}/m);
    expect(exposition).toMatch(/^db_client_connections_usage\{server="archive",db_client_connection_state="idle"\} [1-9]/m);
    expect(exposition).toMatch(/^db_client_connection_pending_requests\{server="trust"\} 0$/m);
    expect(exposition).toMatch(/^process_cpu_seconds_total /m);

    const checked = checkMetrics(exposition);
    expect(checked, checked.output).toEqual({ status: 0, output: '' });
    // The listener writes the exposition a family at a time: the same series as exposition() in one string, and HEAD answers no body.
    expect(platformSeries(exposition)).toEqual(platformSeries(await platform.stack.operations.metrics.exposition()));
    const head = await fetch(platform.stack.metrics.url, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8', '']);
  });

  it('adds no series for 10,000 distinct passports, and bounds operation names chosen by clients', async () => {
    const unknownPassport = (index: number) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    expect((await platform.rest('issuer', `/passports/${unknownPassport(0)}`)).status).toBe(404);
    const before = platformSeries(await scrape());
    // Asked over node:http's kept-alive sockets rather than fetch: the same GET for the platform, a
    // third less CPU for the client (undici's fetch), which runs in this process beside the stack.
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const statusOf = (url: string) => new Promise<number>((resolve, reject) => get(url, { agent }, (response) => response.resume().on('end', () => resolve(response.statusCode!))).on('error', reject));
    const statuses = new Map<number, number>();
    let next = 1;
    const worker = async () => {
      for (let index = next++; index <= DISTINCT_PASSPORTS; index = next++) {
        const status = await statusOf(`${platform.base('issuer')}/passports/${unknownPassport(index)}`);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker)).finally(() => agent.destroy());
    expect(Object.fromEntries(statuses)).toEqual({ 404: DISTINCT_PASSPORTS });
    const after = await scrape();
    expect(platformSeries(after)).toEqual(before);
    expect(sampleOf(after, 'http_server_request_duration_seconds_count{server="facade",http_route="/issuer/passports/:id",http_request_method="GET",http_response_status_code="404"}')).toBe(
      DISTINCT_PASSPORTS + 1,
    );

    for (let index = 0; index < OPERATION_NAME_LIMIT + 50; index += 1) expect((await platform.graphql(`query ClientChosen${index} { __typename }`)).errors).toBeUndefined();
    const names = new Set([...(await scrape()).matchAll(/^graphql_server_operation_duration_seconds_count\{server="gateway",graphql_operation_name="([^"]*)"/gm)].map(([, name]) => name));
    expect(names.size).toBeLessThanOrEqual(OPERATION_NAME_LIMIT + 1);
    expect(names).toContain('_OTHER');
  }, 300_000);

  it('takes under 20 ms of CPU a scrape', async () => {
    // CPU time, measured in this process (the stack runs in it): wall time on a shared 2-core machine is mostly waiting for a core.
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let round = 0; round < 21; round += 1) {
      const before = process.cpuUsage();
      const started = performance.now();
      await platform.stack.operations.metrics.exposition();
      wall.push(performance.now() - started);
      const used = process.cpuUsage(before);
      cpu.push((used.user + used.system) / 1000);
    }
    const http: number[] = [];
    for (let round = 0; round < 21; round += 1) {
      const started = performance.now();
      await scrape();
      http.push(performance.now() - started);
    }
    console.log(
      `one scrape of the whole platform: CPU ${median(cpu).toFixed(1)} ms, collection ${median(wall).toFixed(1)} ms, over HTTP ${median(http).toFixed(1)} ms (medians of 21; ${(await scrape()).length} bytes)`,
    );
    expect(median(cpu)).toBeLessThan(20);
  });

  it('is scraped by a real Prometheus, which reads a series of each server back', async () => {
    const prometheus = await startPrometheus([platform.stack.metrics.url]);
    try {
      await expect
        .poll(async () => (await prometheus.query('sum by (server) (http_server_request_duration_seconds_count)')).map((sample) => sample.metric.server).sort(), { timeout: 20_000, interval: 100 })
        .toEqual([...SERVERS].sort());
      const created = await prometheus.query('passport_passports_created_total');
      expect(created.map((sample) => [sample.metric.server, sample.value[1]])).toEqual([['issuer', '1']]);
    } finally {
      await prometheus.stop();
    }
  });

  it('has alert rules promtool accepts and a dashboard, naming only metrics the platform exposes', async () => {
    const rules = spawnSync(PROMTOOL, ['check', 'rules', 'docs/operations/alerts.yml'], { encoding: 'utf8' });
    expect(rules.status, `${rules.stdout}${rules.stderr}`).toBe(0);
    const exposition = await scrape();
    const exposed = declaredNames(exposition);
    const labels = new Set([...exposition.matchAll(/[{,]([a-z_]+)="/g)].map(([, label]) => label!));
    // Every name of the platform's families in the text, less those that are label names.
    const named = (text: string) => new Set([...text.matchAll(/\b((?:http|graphql|db|passport|process|nodejs)_[a-z0-9_]+)\b/g)].map(([, name]) => name!).filter((name) => !labels.has(name)));
    const alerts = named(readFileSync('docs/operations/alerts.yml', 'utf8'));
    const dashboard = named(readFileSync('docs/operations/grafana-dashboard.json', 'utf8'));
    expect(alerts.size).toBeGreaterThan(3);
    expect(dashboard.size).toBeGreaterThan(5);
    expect([...alerts, ...dashboard].filter((name) => !exposed.has(name))).toEqual([]);
  });
});
