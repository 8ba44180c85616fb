/**
 * `npm run soak`: proof under faults, races, bad input and bad credentials, on loopback only, bounded
 * in time and requests; writes docs/RELIABILITY.md and exits non-zero when any part fails.
 *
 *   npm run soak                          # every part, seed 20261123; writes docs/RELIABILITY.md
 *   SOAK_SEED=7 npm run soak              # another seed (printed in the report, so any run can be repeated)
 *   npm run soak -- malformed concurrency # some parts only: printed, the document is left as it is
 *
 * Parts: crash safety and concurrency on the all-in-one platform as `npm start` runs it (a child
 * process, killed and restarted); bad input and authorization on a platform in this process; no
 * egress over the whole run (soak/egress.ts).
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessTokens, hashToken } from '../lib/auth/tokens.js';
import { codeVersion, machine, openBench, REPO_ROOT } from '../bench/support.js';
import { runAuthorization } from './authorization.js';
import { runConcurrency } from './concurrency.js';
import type { SoakContext } from './context.js';
import { runCrashSafety } from './crash.js';
import { EgressWatch } from './egress.js';
import { prng, seedFixtures, type Fixtures } from '../test/support/write-fixtures.js';
import { runMalformed } from './malformed.js';
import { PlatformProcess } from '../bench/platform-process.js';
import { markdownTable, type SoakSection } from './report.js';

const PARTS = ['crash', 'concurrency', 'malformed', 'authorization'] as const;
const asked = process.argv.slice(2);
if (asked.some((name) => !(PARTS as readonly string[]).includes(name))) {
  console.error(`usage: npm run soak [-- ${PARTS.join(' ')}] (no names: every part)`);
  process.exit(2);
}
const selected = new Set<string>(asked.length ? asked : PARTS);
const seed = Number(process.env.SOAK_SEED ?? 20261123);
if (!Number.isSafeInteger(seed)) throw new Error(`SOAK_SEED must be an integer, not ${process.env.SOAK_SEED}`);
const startedAt = new Date();
const clock = performance.now();
const workDir = mkdtempSync(join(tmpdir(), 'soak-'));
// The platform's data folder is inside; run as root, its PostgreSQL (the postgres user) must enter this one.
chmodSync(workDir, 0o755);
const egress = new EgressWatch(join(workDir, 'egress.jsonl'));
await egress.start();
const sections: SoakSection[] = [];
const log = (line: string) => console.log(`[${((performance.now() - clock) / 1000).toFixed(0).padStart(4)} s] ${line}`);

/** Runs one part; a part that throws is reported as failed with its error, and the run goes on. */
async function part(title: string, run: () => Promise<SoakSection>): Promise<void> {
  log(`${title} …`);
  const partStarted = performance.now();
  try {
    const section = await run();
    sections.push(section);
    log(`${title}: ${section.passed ? 'passed' : 'FAILED'} in ${section.seconds.toFixed(0)} s`);
  } catch (error) {
    sections.push({
      title,
      method: 'The part stopped with an error.',
      passed: false,
      figures: [],
      failures: [String((error as Error).stack ?? error)],
      seconds: (performance.now() - partStarted) / 1000,
    });
    log(`${title}: FAILED: ${String(error)}`);
  }
}

try {
  // The all-in-one platform in a child process, with the guard loaded there too.
  if (selected.has('crash') || selected.has('concurrency')) await platformParts();
  if (selected.has('malformed') || selected.has('authorization')) await inProcessParts();
} finally {
  sections.push(egress.section());
  rmSync(workDir, { recursive: true, force: true });
}

async function platformParts(): Promise<void> {
  const guard = fileURLToPath(new URL('./loopback-guard.ts', import.meta.url));
  const platform = await PlatformProcess.prepare({ dataDir: join(workDir, 'platform'), imports: [guard], env: { SOAK_EGRESS_LOG: join(workDir, 'egress.jsonl') } });
  try {
    if (selected.has('crash')) await part('Crash safety', () => runCrashSafety({ platform, random: prng(seed), rounds: 3, clients: 16, killAfterMs: [3_000, 6_000] }));
    if (selected.has('concurrency'))
      await part('Concurrency', async () => {
        if (!platform.pid) await platform.start();
        return runConcurrency(platform);
      });
  } finally {
    const exitCode = await platform.stop();
    const leftOver = await platform.postmasterPid();
    const crash = sections.find((section) => section.title === 'Crash safety');
    if (crash) {
      crash.figures.push(
        { measure: 'exit code of the last, clean stop (SIGTERM)', value: String(exitCode), expected: '0' },
        { measure: 'PostgreSQL processes left after it', value: leftOver ? 1 : 0, expected: 0 },
      );
      if (exitCode !== 0 || leftOver) {
        crash.passed = false;
        crash.failures.push(`the clean stop ended with exit code ${exitCode}${leftOver ? `, leaving PostgreSQL ${leftOver} running` : ''}`);
      }
    }
  }
}

/** Bad input and credentials, on a platform in this process (so its tables can be read between requests). */
async function inProcessParts(): Promise<void> {
  const bench = await openBench('soak');
  try {
    const tokens = { admin: `soak-admin-${randomBytes(16).toString('hex')}`, writer: `soak-writer-${randomBytes(16).toString('hex')}` };
    const stack = await bench.startStack(new AccessTokens((['admin', 'writer'] as const).map((role) => ({ name: `soak-${role}`, role, sha256: hashToken(tokens[role]) }))));
    const context: SoakContext = { stack, databaseUrl: bench.databaseUrl, tokens, seed };
    // Seeded once for both parts; a failure to seed is reported by the part that needed it.
    let fixtures: Fixtures | undefined;
    const seeded = async () => (fixtures ??= await seedFixtures(context));
    if (selected.has('malformed')) await part('Bad input', async () => runMalformed(context, await seeded()));
    if (selected.has('authorization')) await part('Authorization', async () => runAuthorization(context, await seeded()));
  } finally {
    await bench.close();
  }
}

const seconds = (performance.now() - clock) / 1000;
const m = machine();
const figureCell = (value: number | string, expected?: number | string) => (expected === undefined ? String(value) : `${value} (must be ${expected})`);
const document = `# Reliability

Written by \`npm run soak\` (soak/index.ts). Every part runs against the real platform on an embedded
PostgreSQL in a temporary folder, on loopback only; nothing here is mocked. The run is bounded (three
kill-and-restart rounds, fixed numbers of clients and requests) and repeatable: the generators take
the seed below (\`SOAK_SEED=<n> npm run soak\` for another).

- Run ${startedAt.toISOString()}, ${seconds.toFixed(0)} s, seed ${seed}, commit ${codeVersion()}
- Machine: ${m.cpuCount} × ${m.cpuModel}, ${m.memoryGiB.toFixed(1)} GiB memory, ${m.os}; Node ${m.node}

${markdownTable(
  ['part', 'verdict', 'key figures', 'time'],
  sections.map((section) => [
    section.title,
    section.passed ? 'passed' : '**FAILED**',
    section.figures
      .filter((figure) => figure.expected !== undefined)
      .map((figure) => `${figure.measure}: ${figure.value}`)
      .join('; '),
    `${section.seconds.toFixed(0)} s`,
  ]),
)}

${sections
  .map((section) =>
    [
      `## ${section.title}: ${section.passed ? 'passed' : 'FAILED'}`,
      section.method,
      markdownTable(
        ['measure', 'value'],
        section.figures.map((figure) => [figure.measure, figureCell(figure.value, figure.expected)]),
      ),
      section.details ?? '',
      section.failures.length ? `Failures:\n\n${section.failures.map((failure) => `- ${failure.replaceAll('\n', ' ')}`).join('\n')}` : '',
    ]
      .filter(Boolean)
      .join('\n\n'),
  )
  .join('\n\n')}
`;
if (selected.size === PARTS.length) writeFileSync(join(REPO_ROOT, 'docs', 'RELIABILITY.md'), document);
else console.log(`\n${document}`);
console.log(
  `\n${sections.map((section) => `${section.passed ? 'passed' : 'FAILED'}  ${section.title}`).join('\n')}\n\n${selected.size === PARTS.length ? 'Written to docs/RELIABILITY.md' : 'Some parts only: docs/RELIABILITY.md is left as it was'} (${seconds.toFixed(0)} s)`,
);
process.exitCode = sections.every((section) => section.passed) ? 0 : 1;
