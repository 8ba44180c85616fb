#!/usr/bin/env node
// `npm test`: the system packages the tests need (bin/system-packages.ts: installs missing ones as root
// with apt-get, else names the command), the type check, lint and format check (biome.json), the
// dependency rules (.dependency-cruiser.cjs), the unit layer (no PostgreSQL), then the integration
// layer, in that order so the quick layers fail first; stops at the first failing layer and prints
// each layer's time.
// Arguments go to both vitest layers (e.g. `npm test -- --reporter=dot`).
import { spawnSync } from 'node:child_process';

const vitestArgs = process.argv.slice(2);
const LAYERS = [
  ['system packages', ['node', '--import', 'tsx', 'bin/system-packages.ts']],
  ['typecheck', ['tsc', '-p', 'tsconfig.json', '--noEmit']],
  ['typecheck (verification page, DOM)', ['tsc', '-p', 'verifier/page/tsconfig.json']],
  ['lint', ['biome', 'lint']],
  ['format', ['biome', 'format']],
  ['dependencies', ['depcruise', 'lib', 'subgraphs', 'gateway', 'rest-facade', 'verifier', 'bin', 'prisma', 'bench', 'soak', 'test', '--config', '.dependency-cruiser.cjs']],
  ['unit', ['vitest', 'run', '--project', 'unit', ...vitestArgs]],
  ['integration', ['vitest', 'run', '--project', 'integration', ...vitestArgs]],
];

const results = [];
for (const [name, args] of LAYERS) {
  console.log(`\n== ${name}: ${args.join(' ')}`);
  const started = performance.now();
  // Tools come from node_modules/.bin; a `node` layer runs on this Node itself.
  const [command, ...rest] = args[0] === 'node' ? [process.execPath, ...args.slice(1)] : ['npx', '--no-install', ...args];
  const { status } = spawnSync(command, rest, { stdio: 'inherit' });
  results.push({ name, seconds: (performance.now() - started) / 1000, passed: status === 0 });
  if (status !== 0) break;
}
console.log(`\n${'layer'.padEnd(36)} seconds  result`);
for (const { name, seconds, passed } of results) console.log(`${name.padEnd(36)} ${seconds.toFixed(1).padStart(7)}  ${passed ? 'passed' : 'FAILED'}`);
process.exit(results.every((result) => result.passed) && results.length === LAYERS.length ? 0 : 1);
