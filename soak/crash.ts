/**
 * Crash safety: the all-in-one platform (bin/start.ts, its own process group) is killed with SIGKILL
 * while clients append events and take snapshots, then started again on the same folder, several
 * times. After each restart every acknowledged event must be in its log with the signature it was
 * acknowledged with, every log must verify under the pinned keys, and no snapshot may be half
 * written (soak/invariants.ts); every acknowledged registry version and trust node, written by two
 * more clients meanwhile, must be there as acknowledged.
 */
import { newKey } from '../test/support/write-fixtures.js';
import { Acknowledged, auditAdminLogs, auditLogs, auditSnapshots } from './invariants.js';
import type { PlatformProcess } from '../bench/platform-process.js';
import { FailureLog, markdownTable, type SoakSection } from './report.js';
import { RestClient } from '../test/support/rest-client.js';

export interface CrashOptions {
  platform: PlatformProcess;
  random: () => number;
  /** Kill-and-restart rounds. */
  rounds: number;
  /** Concurrent appending clients; two share each passport, so appends also contend. */
  clients: number;
  /** Each round is killed after a random time between these (ms) of sustained appends. */
  killAfterMs: readonly [number, number];
}

interface RoundFigures {
  round: number;
  killedAfterMs: number;
  acknowledged: number;
  snapshots: number;
  otherWrites: number;
  unanswered: number;
  restartMs: number;
}

export async function runCrashSafety(options: CrashOptions): Promise<SoakSection> {
  const started = performance.now();
  const { platform } = options;
  const failures = new FailureLog();
  const client = new RestClient(platform.facadeUrl, platform.tokens.writer);
  // The trust graph is the platform admin's to write (docs/OPERATORS.md).
  const platformAdmin = new RestClient(platform.facadeUrl, platform.tokens.admin);
  const acknowledged = new Acknowledged();
  const snapshotIds = new Set<string>();
  /** Registry versions of one item: version → the label its body was acknowledged with. */
  const versions = new Map<number, string>();
  const trustNodes = new Set<string>();
  const rounds: RoundFigures[] = [];
  const ITEM = 'soak-crash-item';

  await platform.start();
  await client.createModel('soak-crash-battery');
  const passportIds: string[] = [];
  for (let index = 0; index < Math.ceil(options.clients / 2); index += 1) passportIds.push(await client.createPassport('soak-crash-battery', `CRASH-${index}`));
  await client.expect(201, 'POST', '/registry/', { kind: 'item', id: ITEM, body: { label: 'v1' } });
  versions.set(1, 'v1');

  for (let round = 1; round <= options.rounds; round += 1) {
    let running = true;
    let unanswered = 0;
    let roundAcks = 0;
    let roundSnapshots = 0;
    let otherWrites = 0;
    // A loop ends at the first request without an answer: the platform is gone.
    const loop = async (step: () => Promise<void>) => {
      while (running) {
        try {
          await step();
        } catch {
          unanswered += 1;
          return;
        }
      }
    };
    const appenders = Array.from({ length: options.clients }, (_, index) =>
      loop(async () => {
        const passportId = passportIds[index % passportIds.length]!;
        const answer = await client.appendObjectEvent(passportId, `${round}.${index}`);
        if (answer.status === 201) {
          acknowledged.record(passportId, answer.body, failures);
          roundAcks += 1;
        } else failures.add(`append to ${passportId}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
      }),
    );
    const snapshotter = loop(async () => {
      const passportId = passportIds[Math.floor(options.random() * passportIds.length)]!;
      const answer = await client.call('POST', '/archive/snapshots', { passport_id: passportId });
      if (answer.status === 201) {
        snapshotIds.add(answer.body.id);
        roundSnapshots += 1;
      } else failures.add(`snapshot of ${passportId}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    });

    // A version whose answer the last kill cut off may have landed: each round starts from what is current.
    let expected = (await client.expect(200, 'GET', `/registry/items/${ITEM}`)).version as number;
    const versioner = loop(async () => {
      const label = `round ${round}, after ${expected}`;
      const answer = await client.call('POST', `/registry/items/${ITEM}/versions`, { expected_version: expected, body: { label } });
      if (answer.status !== 201) return failures.add(`version of ${ITEM}: ${answer.status} ${answer.text.slice(0, 200)}`);
      versions.set(answer.body.version, label);
      expected = answer.body.version;
      otherWrites += 1;
    });
    const nodeMaker = loop(async () => {
      const key = newKey();
      const id = `soak-crash-node-${round}-${trustNodes.size}`;
      const answer = await platformAdmin.call('POST', '/trust/nodes', { id, kind: 'issuer', keys: [{ ...key.jwk, iat: Math.floor(Date.now() / 1000) - 60 }] });
      if (answer.status !== 201) return failures.add(`trust node ${id}: ${answer.status} ${answer.text.slice(0, 200)}`);
      trustNodes.add(id);
      otherWrites += 1;
    });

    const [low, high] = options.killAfterMs;
    const killedAfterMs = Math.round(low + options.random() * (high - low));
    await new Promise((resolve) => setTimeout(resolve, killedAfterMs));
    await platform.crash();
    running = false;
    await Promise.all([...appenders, snapshotter, versioner, nodeMaker]);

    const restartMs = await platform.start();
    rounds.push({ round, killedAfterMs, acknowledged: roundAcks, snapshots: roundSnapshots, otherWrites, unanswered, restartMs });
  }

  // Checked after the last restart: what every earlier round acknowledged must have survived them all.
  const pins = await client.pins();
  const logs = await auditLogs(client, pins, acknowledged, failures, passportIds);
  const databaseUrl = platform.databaseUrl();
  const snapshots = await auditSnapshots(client, pins, databaseUrl, snapshotIds, failures);
  // Only this part has written so far, so every change of these kinds in the database is one of its own.
  const adminLogs = await auditAdminLogs(
    databaseUrl,
    [
      { service: 'issuer', action: 'appendPassportEvent', changes: 'SELECT count(*) FROM issuer.passport_event' },
      { service: 'archive', action: 'createSnapshot', changes: 'SELECT count(*) FROM archive.snapshot' },
      { service: 'registry', action: 'appendRegistryRecordVersion', changes: `SELECT count(*) - 1 FROM registry.record_version WHERE id = '${ITEM}'` },
      { service: 'trust', action: 'upsertTrustNode', changes: `SELECT count(*) FROM trust.trust_node WHERE id LIKE 'soak-crash-node-%'` },
    ],
    failures,
  );
  let otherMissing = 0;
  for (const [version, label] of versions) {
    const stored = await client.call('GET', `/registry/items/${ITEM}?version=${version}`);
    if (stored.status !== 200 || stored.body.body?.label !== label) {
      otherMissing += 1;
      failures.add(`acknowledged version ${version} of ${ITEM}: ${stored.status} ${stored.text.slice(0, 200)}`);
    }
  }
  const graph = await client.expect(200, 'GET', '/trust/graph');
  const nodeIds = new Set((graph.nodes as { id: string }[]).map((node) => node.id));
  for (const id of trustNodes) {
    if (nodeIds.has(id)) continue;
    otherMissing += 1;
    failures.add(`acknowledged trust node ${id} is not in the graph`);
  }

  return {
    title: 'Crash safety',
    method:
      `The all-in-one platform (\`bin/start.ts\`, as \`npm start\` runs it, with its embedded PostgreSQL) was killed with SIGKILL to its whole process group ` +
      `${options.rounds} times, each time after ${options.killAfterMs[0] / 1000}–${options.killAfterMs[1] / 1000} s of ${options.clients} clients appending events ` +
      `(two per passport), one client taking snapshots, one adding registry versions and one adding trust nodes, then started again on the same data folder. After the last restart every passport's log was read ` +
      `back through the REST facade and checked against every acknowledged (201) event, and verified offline (verifier/log.ts) under the published keyrings; ` +
      `every snapshot was checked whole in the database and its archive bytes verified with their notarization (verifier/snapshot.ts); ` +
      `every acknowledged registry version was read back with its body, and every acknowledged trust node looked up in the trust graph; ` +
      `and every change of these kinds in the database was counted against the admin-log entries (outcome ok) of its mutation: one each, written in the change's own transaction.`,
    passed: failures.empty,
    figures: [
      { measure: 'events acknowledged (201) before the kills', value: acknowledged.count },
      { measure: 'acknowledged events missing or different after restart', value: logs.acknowledgedMissing, expected: 0 },
      { measure: 'events in the logs after restart (acknowledged, plus committed ones whose answer the kill cut off)', value: logs.eventsInLogs },
      { measure: 'logs that do not verify', value: logs.logsInvalid, expected: 0 },
      { measure: 'snapshots acknowledged', value: snapshotIds.size },
      { measure: 'snapshots stored after restart', value: snapshots.snapshots },
      { measure: 'acknowledged snapshots missing', value: snapshots.acknowledgedMissing, expected: 0 },
      { measure: 'half-written snapshots (chunks not adding up, chunks without a snapshot)', value: snapshots.halfWritten, expected: 0 },
      { measure: 'snapshots whose bytes or notarization do not verify', value: snapshots.invalid, expected: 0 },
      { measure: 'registry versions and trust nodes acknowledged', value: versions.size - 1 + trustNodes.size },
      { measure: 'acknowledged registry versions or trust nodes missing after restart', value: otherMissing, expected: 0 },
      { measure: 'changes stored (events, snapshots, versions, nodes) checked against their admin-log entries', value: adminLogs.changes },
      { measure: 'kinds of change whose count differs from their admin-log entries with outcome ok', value: adminLogs.mismatched, expected: 0 },
      { measure: 'failed checks', value: failures.count, expected: 0 },
    ],
    failures: failures.list(),
    details: markdownTable(
      ['round', 'killed after', 'events acknowledged', 'snapshots acknowledged', 'versions and nodes acknowledged', 'requests in flight at the kill (answer lost)', 'restart until ready'],
      rounds.map((round) => [
        String(round.round),
        `${(round.killedAfterMs / 1000).toFixed(1)} s`,
        String(round.acknowledged),
        String(round.snapshots),
        String(round.otherWrites),
        String(round.unanswered),
        `${(round.restartMs / 1000).toFixed(1)} s`,
      ]),
    ),
    seconds: (performance.now() - started) / 1000,
  };
}
