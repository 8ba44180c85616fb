#!/usr/bin/env node
// `npm test`: first, side by side, since none needs another's result: the system packages the tests
// need (bin/system-packages.ts: installs missing ones as root with apt-get, else names the command),
// the commands' compiled build (bin/run.mjs, which the integration tests' child processes run), the
// type checks, lint and format check (biome.json) and the dependency rules (.dependency-cruiser.cjs);
// then the unit layer (no PostgreSQL) with the integration layer starting beside it, since the
// integration layer's first seconds go to starting PostgreSQL and migrating its template; and once
// the unit layer has passed, the benchmark tools installed unless they are (test/support/bench-tools.ts:
// Hive Gateway, which test/gateway/hive-gateway.test.ts runs, one of the integration layer's later
// files, waiting for the install under the same lock if it comes first). On a fresh clone that install
// (900 packages, ~60 CPU s) held the test layers back by half a minute as a step before them, and
// beside the unit layer took it past its minute. The quick layers still fail first: a failing layer
// stops the layers still running beside it and the steps after it. Each layer's time is printed.
// Beside others a layer's output is held until the layers listed before it have ended, then shown
// whole and followed live, so layers' lines never interleave.
// Arguments go to both vitest layers (e.g. `npm test -- --reporter=dot`). The vitest layers run with
// the platform's settings a caller's shell may hold (CALLERS_SHELL): the suite drops them
// (test/support/environment.ts), and a test or a process it starts that still saw one would fail.
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

const vitestArgs = process.argv.slice(2);
/**
 * The integration layer's workers: one a core and one more, since its files wait as well as compute
 * (processes starting, timers, the disk). On two cores three ended the layer in 366–483 s against
 * 403–816 s for two (docs/PLUMBING.md, "The suite, fifth session"); the unit layer beside it keeps
 * vitest.config.ts's two. A count the caller gives (`npm test -- --maxWorkers=N`) is theirs: vitest takes one.
 */
const integrationWorkers = vitestArgs.some((arg) => arg.startsWith('--maxWorkers')) ? [] : [`--maxWorkers=${availableParallelism() + 1}`];
/** What an operator's shell may export: tokens, another data folder and database, debug logs, a trace collector, ports of their own. */
const CALLERS_SHELL = {
  PASSPORT_ADMIN_TOKEN: 'callers-shell-admin-token-0123456789',
  PASSPORT_WRITER_TOKEN: 'callers-shell-writer-token-0123456789',
  PASSPORT_DATA_DIR: '/nonexistent/callers-shell/data',
  PASSPORT_KEK_FILE: '/nonexistent/callers-shell/passport.kek',
  DATABASE_URL: 'postgresql://caller:secret@127.0.0.1:9/callers_shell',
  IDENTITY_DATABASE_URL: 'postgresql://caller:secret@127.0.0.1:9/callers_shell?schema=identity',
  EMBEDDED_PG_PORT: '9',
  PGPASSWORD: 'callers-shell',
  LOG_LEVEL: 'debug',
  LOG_FORMAT: 'pretty',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
  GATEWAY_PORT: '9',
  FACADE_PORT: '9',
  METRICS: 'off',
  GRAPHQL_MAX_COST: '1',
  RATE_LIMITS: 'anonymous=1/3600,writer=1/3600,admin=1/3600,loopback=counted',
  ISSUER_QR_BUDGET: '100',
};
/**
 * The type checks run TypeScript 7, the compiler's native port (package `typescript-7`): the same
 * checks at a quarter of 5.9's CPU (docs/PLUMBING.md, "TypeScript 7 for the type checks"). TypeScript
 * 5.9 stays the package `typescript`, whose JavaScript API openapi-typescript builds its types with.
 */
const TSC = join('node_modules', 'typescript-7', 'bin', 'tsc');
const STEPS = [
  [
    ['system packages', ['node', '--import', 'tsx', 'bin/system-packages.ts']],
    ['compiled build', ['node', 'bin/run.mjs', '--build']],
    ['typecheck', ['node', TSC, '-p', 'tsconfig.json', '--noEmit']],
    ['typecheck (verification page, DOM)', ['node', TSC, '-p', 'verifier/page/tsconfig.json']],
    ['lint', ['biome', 'lint']],
    ['format', ['biome', 'format']],
    ['dependencies', ['depcruise', 'lib', 'subgraphs', 'gateway', 'rest-facade', 'verifier', 'bin', 'prisma', 'bench', 'soak', 'test', '--config', '.dependency-cruiser.cjs']],
  ],
  [
    ['unit', ['vitest', 'run', '--project', 'unit', ...vitestArgs], CALLERS_SHELL],
    ['integration', ['vitest', 'run', '--project', 'integration', ...integrationWorkers, ...vitestArgs], CALLERS_SHELL],
    ['benchmark tools (Hive Gateway, for its test)', ['node', '--import', 'tsx', 'test/support/bench-tools.ts'], {}, 'unit'],
  ],
];

const running = new Set();
// The layers run in process groups of their own, which a terminal's Ctrl-C does not reach.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    for (const layer of running) layer.stop();
    process.exit(130);
  });

/**
 * Starts one layer in a process group of its own (so it can be stopped with its children). The first
 * layer of a step writes to the terminal; the others' output is held until `show()`.
 */
function startLayer(name, args, live, settings = {}) {
  const started = performance.now();
  // The tools straight from node_modules/.bin (npx would add an npm start-up to every layer); a `node` layer on this Node itself.
  const command = args[0] === 'node' ? process.execPath : join('node_modules', '.bin', args[0]);
  const child = spawn(command, args.slice(1), {
    stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ...settings, ...(process.stdout.isTTY && !live ? { FORCE_COLOR: '1' } : {}) },
  });
  let held = live ? undefined : [];
  const write = (stream) => (chunk) => (held ? held.push([stream, chunk]) : stream.write(chunk));
  child.stdout?.on('data', write(process.stdout));
  child.stderr?.on('data', write(process.stderr));
  const layer = {
    name,
    stopped: false,
    show() {
      if (held) console.log(`\n== ${name}: ${args.join(' ')}`);
      for (const [stream, chunk] of held ?? []) stream.write(chunk);
      held = undefined;
    },
    stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
        layer.stopped = true;
      } catch {
        // The group ended between the check and the signal.
      }
    },
    ended: new Promise((resolve) =>
      child.once('close', (code) => {
        running.delete(layer);
        resolve({ name, seconds: (performance.now() - started) / 1000, passed: code === 0, stopped: layer.stopped });
      }),
    ),
  };
  running.add(layer);
  return layer;
}

/** A layer started once `first` has passed (output held, as beside others); never started if it failed or was stopped. */
function startAfter(first, name, args, settings) {
  let stopped = false;
  const started = first.ended.then(({ passed }) => (passed && !stopped ? startLayer(name, args, false, settings) : undefined));
  return {
    name,
    async show() {
      await (await started)?.show();
    },
    stop() {
      stopped = true;
      started.then((layer) => layer?.stop());
    },
    ended: started.then((layer) => layer?.ended ?? { name, seconds: 0, passed: false, stopped: true }),
  };
}

const results = [];
for (const step of STEPS) {
  console.log(`\n== ${step.map(([name, args]) => `${name}: ${args.join(' ')}`).join('\n== ')}\n(side by side; the first shown as it runs, each other one once those before it have ended)`);
  const layers = [];
  for (const [index, [name, args, settings, after]] of step.entries()) {
    const first = layers.find((layer) => layer.name === after);
    layers.push(first ? startAfter(first, name, args, settings) : startLayer(name, args, index === 0, settings));
  }
  // A failure stops whatever still runs beside it.
  for (const layer of layers)
    layer.ended.then(({ passed }) => {
      if (!passed) for (const other of layers) other.stop();
    });
  for (const layer of layers) {
    await layer.show();
    results.push(await layer.ended);
  }
  if (!results.every((result) => result.passed)) break;
}
console.log(`\n${'layer'.padEnd(36)} seconds  result`);
for (const { name, seconds, passed, stopped } of results) console.log(`${name.padEnd(36)} ${seconds.toFixed(1).padStart(7)}  ${passed ? 'passed' : stopped ? 'stopped' : 'FAILED'}`);
process.exit(results.every((result) => result.passed) && results.length === STEPS.flat().length ? 0 : 1);
