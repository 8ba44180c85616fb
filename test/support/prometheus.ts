/**
 * Debian's Prometheus and promtool, for the tests of the platform's metrics: a real Prometheus in a
 * temporary folder, scraping given targets every second, asked through its HTTP API.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

/** `promtool check metrics` of an exposition: its exit status and what it said (lint problems included). */
export function checkMetrics(exposition: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

export interface RunningPrometheus {
  url: string;
  /** An instant query's result vector. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

/** Starts Prometheus scraping each metrics URL (http://host:port/metrics) every second. */
export async function startPrometheus(targets: readonly string[]): Promise<RunningPrometheus> {
  const folder = await mkdtemp(join(tmpdir(), 'passport-prometheus-'));
  const port = await freePort();
  const hosts = targets.map((target) => new URL(target).host);
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    'scrape_configs:',
    '  - job_name: passport',
    '    static_configs:',
    `      - targets: [${hosts.map((host) => `'${host}'`).join(', ')}]`,
    '',
  ];
  await writeFile(join(folder, 'prometheus.yml'), config.join('\n'));
  const child = spawn(PROMETHEUS, [`--config.file=${join(folder, 'prometheus.yml')}`, `--storage.tsdb.path=${join(folder, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(folder, { recursive: true, force: true });
  };
  for (const started = Date.now(); ; await new Promise((resolve) => setTimeout(resolve, 200))) {
    if (child.exitCode !== null || Date.now() - started > 30_000) {
      await stop();
      throw new Error(`Prometheus did not start:\n${output}`);
    }
    if (
      await fetch(`${url}/-/ready`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
  }
  return {
    url,
    async query(promql) {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
      const body = (await response.json()) as { status: string; data?: { result: [] }; error?: string };
      if (body.status !== 'success') throw new Error(`Prometheus refused ${promql}: ${body.error}`);
      return body.data!.result;
    },
    stop,
  };
}
