/**
 * A change and its admin-log entry are one write (DESIGN §3, "every write is atomic"): the entry is
 * written in the change's own transaction, so a change whose entry cannot be stored does not happen,
 * and a change that happens has exactly one entry. The database is made to refuse admin-log rows
 * (a CHECK constraint that fails for new rows) to stand for any failure between the two.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceName } from '../../lib/config/services.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { newKey, seconds } from '../trust/support.js';
import { createModel, createPassport, objectEvent } from '../issuer/support.js';

let platform: TestStack;
let passportId: string;
const SERVICES: readonly ServiceName[] = ['trust', 'registry', 'issuer', 'archive'];

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, 'atomic-battery');
  passportId = (await createPassport(platform, 'atomic-battery')).passport_id;
}, 60_000);
afterAll(() => platform?.stop());

const refuseEntries = (refuse: boolean) =>
  Promise.all(
    SERVICES.map((service) =>
      sql(
        platform.databaseUrl,
        refuse ? `ALTER TABLE "${service}".admin_log ADD CONSTRAINT refuse_entries CHECK (false) NOT VALID` : `ALTER TABLE "${service}".admin_log DROP CONSTRAINT refuse_entries`,
      ),
    ),
  );

/** One change per service, through the REST facade as a writer; and how to see whether it happened. */
async function changes() {
  const key = await newKey();
  const suffix = randomUUID().slice(0, 8);
  const nodeId = `atomic-node-${suffix}`;
  const itemId = `atomic-item-${suffix}`;
  return [
    {
      service: 'trust' as const,
      action: 'upsertTrustNode',
      make: () => platform.rest('trust', '/nodes', { body: { id: nodeId, kind: 'issuer', keys: [{ ...key.jwk, iat: seconds() - 60 }] }, as: 'admin' }),
      happened: async () => (await platform.rest('trust', '/graph')).body.nodes.some((node: { id: string }) => node.id === nodeId),
    },
    {
      service: 'registry' as const,
      action: 'createRegistryRecord',
      make: () => platform.rest('registry', '/', { body: { kind: 'item', id: itemId, body: { label: 'atomic' } }, as: 'writer' }),
      happened: async () => (await platform.rest('registry', `/items/${itemId}`)).status === 200,
    },
    {
      service: 'issuer' as const,
      action: 'appendPassportEvent',
      make: () => platform.rest('issuer', `/passports/${passportId}/events`, { body: { type: 'ObjectEvent', payload: objectEvent() }, as: 'writer' }),
      logSize: async () => (await platform.rest('issuer', `/passports/${passportId}`)).body.log_size as number,
    },
    {
      service: 'archive' as const,
      action: 'createSnapshot',
      make: () => platform.rest('archive', '/snapshots', { body: { passport_id: passportId }, as: 'writer' }),
      count: async () => (await platform.rest('archive', `/snapshots?passport_id=${passportId}`)).body.snapshots.length as number,
    },
  ];
}

const entries = async (service: ServiceName, action: string) =>
  ((await platform.rest(service, '/admin/log?limit=100', { as: 'admin' })).body.entries as { action: string; outcome: string }[]).filter((entry) => entry.action === action);

describe('a change and its admin-log entry', () => {
  it('do not happen apart: when the entry cannot be stored, no service keeps the change', async () => {
    const [trust, registry, issuer, archive] = await changes();
    const logSize = await issuer!.logSize!();
    const snapshots = await archive!.count!();
    await refuseEntries(true);
    try {
      for (const change of [trust!, registry!, issuer!, archive!]) expect((await change.make()).status, change.service).toBe(500);
    } finally {
      await refuseEntries(false);
    }
    expect(await trust!.happened!()).toBe(false);
    expect(await registry!.happened!()).toBe(false);
    expect(await issuer!.logSize!()).toBe(logSize);
    expect(await archive!.count!()).toBe(snapshots);
  });

  it('are written together: each change that happens has exactly one entry, outcome ok', async () => {
    for (const change of await changes()) {
      const before = (await entries(change.service, change.action)).length;
      expect((await change.make()).status, change.service).toBe(201);
      const after = await entries(change.service, change.action);
      expect(after.length - before, change.service).toBe(1);
      expect(after[0]!.outcome).toBe('ok');
    }
  });
});
