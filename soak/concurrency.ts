/**
 * Concurrency: 50-way races on the platform's writes, with the invariants checked afterwards.
 * - appends: 50 clients on one passport, and 50 on a passport each: every append lands once, the
 *   log is one contiguous chain and verifies;
 * - lifecycle: 50 clients activate one draft passport, then 50 suspend it: exactly one of each wins,
 *   the others get 409;
 * - registry versions: 50 clients add a version to one item record expecting the same current one (one wins, 49 get
 *   409), then 50 clients each retry until their version lands: versions are contiguous, one current;
 * - snapshots: 20 snapshots of one passport while events are appended to it: every one verifies.
 */
import { Acknowledged, auditLogs, auditSnapshots } from './invariants.js';
import type { PlatformProcess } from '../bench/platform-process.js';
import { FailureLog, markdownTable, type SoakSection } from './report.js';
import { RestClient, type Answer } from '../test/support/rest-client.js';

const CLIENTS = 50;
const APPENDS_PER_CLIENT = 10;

/** Counts answers by status, e.g. `201×1, 409×49`. */
function statusCounts(answers: readonly Pick<Answer, 'status'>[]): string {
  const counts = new Map<number, number>();
  for (const answer of answers) counts.set(answer.status, (counts.get(answer.status) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(', ');
}

export async function runConcurrency(platform: PlatformProcess): Promise<SoakSection> {
  const started = performance.now();
  const failures = new FailureLog();
  const client = new RestClient(platform.facadeUrl, platform.tokens.writer);
  const rows: string[][] = [];
  let raceMismatches = 0;
  const expectStatuses = (race: string, answers: readonly Answer[], wanted: Record<number, number>) => {
    const got = statusCounts(answers);
    const want = statusCounts(Object.entries(wanted).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status: Number(status) }))));
    rows.push([race, got, want]);
    if (got === want) return;
    raceMismatches += 1;
    failures.add(`${race}: answers ${got}, expected ${want}`);
  };
  const model = 'soak-race-battery';
  await client.createModel(model);

  // Appends, all on one passport, then one passport each.
  const acknowledged = new Acknowledged();
  const shared = await client.createPassport(model, 'RACE-SHARED');
  const own = await Promise.all(Array.from({ length: CLIENTS }, (_, index) => client.createPassport(model, `RACE-OWN-${index}`)));
  for (const [race, passportOf] of [
    [`${CLIENTS} clients × ${APPENDS_PER_CLIENT} appends, one passport`, () => shared],
    [`${CLIENTS} clients × ${APPENDS_PER_CLIENT} appends, a passport each`, (index: number) => own[index]!],
  ] as const) {
    const answers: Answer[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, index) => {
        for (let n = 0; n < APPENDS_PER_CLIENT; n += 1) {
          const passportId = passportOf(index);
          const answer = await client.appendObjectEvent(passportId, `${index}.${n}`);
          answers.push(answer);
          if (answer.status === 201) acknowledged.record(passportId, answer.body, failures);
        }
      }),
    );
    expectStatuses(race, answers, { 201: CLIENTS * APPENDS_PER_CLIENT });
  }

  // Lifecycle transitions: one winner each.
  const lifecycle = await client.createPassport(model, 'RACE-LIFECYCLE');
  for (const [type, payload] of [
    ['activated', { placed_on_market_at: '2026-01-01T00:00:00Z' }],
    ['suspended', { reason: 'soak race' }],
  ] as const) {
    const answers = await Promise.all(Array.from({ length: CLIENTS }, () => client.call('POST', `/issuer/passports/${lifecycle}/events`, { type, payload })));
    for (const answer of answers) if (answer.status === 201) acknowledged.record(lifecycle, answer.body, failures);
    expectStatuses(`${CLIENTS} clients send '${type}' to one passport`, answers, { 201: 1, 409: CLIENTS - 1 });
  }
  const after = await client.passportWithEvents(lifecycle);
  if (after.status !== 'suspended' || after.log.length !== 2) failures.add(`lifecycle race: status ${after.status} with ${after.log.length} events, expected suspended with 2`);

  // Registry versions: optimistic concurrency on expected_version.
  const record = 'soak-race-item';
  await client.expect(201, 'POST', '/registry/', { kind: 'item', id: record, body: { label: 'first' } });
  const versionBody = (label: string) => ({ label });
  const stale = await Promise.all(
    Array.from({ length: CLIENTS }, (_, index) => client.call('POST', `/registry/items/${record}/versions`, { expected_version: 1, body: versionBody(`stale ${index}`) })),
  );
  expectStatuses(`${CLIENTS} clients add a version expecting version 1`, stale, { 201: 1, 409: CLIENTS - 1 });
  let retries = 0;
  const landed = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, index) => {
      for (;;) {
        const current = await client.expect(200, 'GET', `/registry/items/${record}`);
        const answer = await client.call('POST', `/registry/items/${record}/versions`, { expected_version: current.version, body: versionBody(`retry ${index}`) });
        if (answer.status !== 409) return answer;
        retries += 1;
      }
    }),
  );
  expectStatuses(`${CLIENTS} clients each retry until their version lands`, landed, { 201: CLIENTS });
  const chain = await client.expect(200, 'GET', `/registry/items/${record}/supersession`);
  const versions = (chain.versions as { version: number; current: boolean; predecessor: number | null; successor: number | null }[]).map((version) => version.version);
  const expectedVersions = Array.from({ length: CLIENTS + 2 }, (_, index) => index + 1);
  if (versions.join() !== expectedVersions.join()) failures.add(`registry versions ${versions.join()} are not 1..${CLIENTS + 2}`);
  const currents = chain.versions.filter((version: { current: boolean }) => version.current).map((version: { version: number }) => version.version);
  if (currents.join() !== String(CLIENTS + 2)) failures.add(`current registry versions: ${currents.join() || 'none'}, expected ${CLIENTS + 2} alone`);
  rows.push([
    `supersession chain after the races`,
    `versions 1–${Math.max(...versions)}, current ${currents.join()}; ${retries} retries after 409`,
    `versions 1–${CLIENTS + 2}, current ${CLIENTS + 2}`,
  ]);

  // Snapshots while the passport grows.
  const growing = own[0]!;
  const [snapshotAnswers] = await Promise.all([
    Promise.all(Array.from({ length: 20 }, () => client.call('POST', '/archive/snapshots', { passport_id: growing }))),
    Promise.all(
      Array.from({ length: 10 }, async (_, index) => {
        const answer = await client.appendObjectEvent(growing, `snap.${index}`);
        if (answer.status === 201) acknowledged.record(growing, answer.body, failures);
      }),
    ),
  ]);
  expectStatuses('20 snapshots of one passport during 10 appends', snapshotAnswers, { 201: 20 });

  const pins = await client.pins();
  const logs = await auditLogs(client, pins, acknowledged, failures);
  const snapshotIds = new Set(snapshotAnswers.filter((answer) => answer.status === 201).map((answer) => answer.body.id as string));
  const snapshots = await auditSnapshots(client, pins, platform.databaseUrl(), snapshotIds, failures);

  return {
    title: 'Concurrency',
    method:
      `Races of ${CLIENTS} concurrent clients through the REST facade on the all-in-one platform: appends (${APPENDS_PER_CLIENT} each) to one passport and to a passport each, ` +
      `one lifecycle transition sent by all at once, registry versions added against the same expected version and then with retries, and 20 snapshots of a passport ` +
      `taken while it grows. Afterwards every log was read back and verified against the acknowledged events, and every snapshot checked whole and verified.`,
    passed: failures.empty,
    figures: [
      { measure: 'events acknowledged', value: acknowledged.count },
      { measure: 'acknowledged events missing or different', value: logs.acknowledgedMissing, expected: 0 },
      { measure: 'logs that do not verify', value: logs.logsInvalid, expected: 0 },
      { measure: 'races with other answers than expected', value: raceMismatches, expected: 0 },
      { measure: 'snapshots that are half written or do not verify', value: snapshots.halfWritten + snapshots.invalid, expected: 0 },
      { measure: 'failed checks', value: failures.count, expected: 0 },
    ],
    failures: failures.list(),
    details: markdownTable(['race', 'answers', 'expected'], rows),
    seconds: (performance.now() - started) / 1000,
  };
}
