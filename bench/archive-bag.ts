/**
 * Snapshot bag creation for a synthetic passport with 10,000 events: the payload is built from the
 * gathered data (JCS of every part), then serialized into one archive buffer, as POST /snapshots
 * does. Prints the median and spread of creation time and the process's peak resident set size.
 *
 *   node --import tsx bench/archive-bag.ts [events] [runs]
 */
import { buildBag, snapshotBag } from '../subgraphs/archive/domain/index.js';
import { syntheticPassport } from '../test/archive/support/synthetic-passport.js';

const events = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 15);
const warmups = 3;

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const content = syntheticPassport(events);
const rssBefore = process.memoryUsage().rss;

const timings: number[] = [];
let size = 0;
for (let run = 0; run < warmups + runs; run += 1) {
  const started = process.hrtime.bigint();
  const { bytes } = await buildBag(
    snapshotBag({
      snapshotId: `snap-${run}`,
      baggedAt: '2025-06-01T08:00:00Z',
      content,
      sourceOrganization: 'Passport Archive',
      softwareAgent: 'passport-archive/bench',
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  size = bytes.length;
  if (run >= warmups) timings.push(elapsed);
}

timings.sort((a, b) => a - b);
const quantile = (q: number) => timings[Math.min(timings.length - 1, Math.floor(q * timings.length))]!;
console.log(`events: ${events}, bag: ${mib(size)} (${size} bytes), runs: ${runs} after ${warmups} warm-ups`);
console.log(`creation time: median ${quantile(0.5).toFixed(1)} ms, min ${timings[0]!.toFixed(1)} ms, p90 ${quantile(0.9).toFixed(1)} ms`);
console.log(`RSS: ${mib(rssBefore)} with the input loaded, peak ${mib(process.resourceUsage().maxRSS * 1024)}`);
