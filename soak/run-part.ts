/**
 * Runs one or both of the bad-input and authorization parts of the soak on a platform of their own
 * (embedded PostgreSQL in a temporary folder, free ports) and prints their sections.
 *
 *   node --import tsx soak/run-part.ts [malformed|authorization|both] [seed]
 */
import { randomBytes } from 'node:crypto';
import { AccessTokens, hashToken } from '../lib/auth/tokens.js';
import { openBench } from '../bench/support.js';
import { runAuthorization } from './authorization.js';
import type { SoakContext } from './context.js';
import { runMalformed } from './malformed.js';
import { markdownTable, type SoakSection } from './report.js';

const part = process.argv[2] ?? 'both';
const seed = process.argv[3] === undefined ? randomBytes(4).readUInt32BE() : Number(process.argv[3]);
if (!['malformed', 'authorization', 'both'].includes(part) || !Number.isInteger(seed)) {
  console.error('usage: soak/run-part.ts [malformed|authorization|both] [seed]');
  process.exit(2);
}

function print(section: SoakSection): void {
  console.log(`\n## ${section.title}: ${section.passed ? 'passed' : 'FAILED'} (${section.seconds.toFixed(1)} s)\n\n${section.method}\n`);
  console.log(markdownTable(['measure', 'value', 'expected'], section.figures.map((figure) => [figure.measure, String(figure.value), figure.expected === undefined ? '' : String(figure.expected)])));
  if (section.failures.length) console.log(`\nFailures:\n${section.failures.map((failure) => `- ${failure}`).join('\n')}`);
  if (section.details) console.log(`\n${section.details}`);
}

const bench = await openBench('soak');
let failed = false;
try {
  const tokens = { admin: `soak-admin-${randomBytes(12).toString('hex')}`, writer: `soak-writer-${randomBytes(12).toString('hex')}` };
  const stack = await bench.startStack(
    new AccessTokens([
      { name: 'soak-admin', role: 'admin', sha256: hashToken(tokens.admin) },
      { name: 'soak-writer', role: 'writer', sha256: hashToken(tokens.writer) },
    ]),
  );
  const context: SoakContext = { stack, databaseUrl: bench.databaseUrl, tokens, seed };
  console.log(`seed ${seed}`);
  for (const run of part === 'both' ? [runMalformed, runAuthorization] : part === 'malformed' ? [runMalformed] : [runAuthorization]) {
    const section = await run(context);
    print(section);
    failed ||= !section.passed;
  }
} finally {
  await bench.close();
}
process.exit(failed ? 1 : 0);
