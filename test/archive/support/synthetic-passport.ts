/**
 * A synthetic but realistically shaped passport for archive tests and the bag benchmark. The
 * signatures are deterministic placeholders of the right length: the archive stores what it is
 * given and does not verify the issuer's signatures itself.
 */
import { createHash } from 'node:crypto';
import type { SnapshotContent } from '../../../subgraphs/archive/domain/index.js';

const digest = (text: string, length: number): string => createHash('sha512').update(text).digest('base64url').slice(0, length);

export function syntheticPassport(eventCount: number, options: { withPack?: boolean; passportId?: string } = {}): SnapshotContent {
  const passportId = options.passportId ?? 'pp-01J9Z3K6V8Q4M2X7T5R1N0B3C8';
  const issuerKid = digest('issuer-key', 43);
  const events = Array.from({ length: eventCount }, (_, seq) => ({
    passport_id: passportId,
    seq,
    type: seq === 0 ? 'Commissioning' : seq % 50 === 0 ? 'Repair' : 'ObjectEvent',
    event_time: new Date(Date.UTC(2024, 0, 1) + seq * 60_000).toISOString(),
    payload: {
      action: 'OBSERVE',
      biz_step: 'urn:epcglobal:cbv:bizstep:inspecting',
      read_point: `urn:epc:id:sgln:4012345.00001.${seq % 100}`,
      epc_list: [`https://id.gs1.org/01/04012345000010/21/${1000 + (seq % 7)}`],
      note: `inspection ${seq}: ${digest(`note-${seq}`, 40)}`,
    },
    prev_hash: digest(`event-${seq - 1}`, 43),
    trust: 'Attested',
    signature: `eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoi${digest(`kid-${seq}`, 40)}..${digest(`signature-${seq}`, 86)}`,
  }));
  const jwkSet = (name: string) => ({
    keys: [{ kty: 'OKP', crv: 'Ed25519', x: digest(`${name}-x`, 43), kid: digest(name, 43), iat: 1_700_000_000 }],
  });
  return {
    passportId,
    core: {
      id: passportId,
      identity: 'https://id.gs1.org/01/04012345000010/10/BATCH-7',
      granularity: 'batch',
      type_ref: { model: 'battery-passport', version: 3 },
      capability_class: 'B',
      status: 'active',
    },
    manifest: { config_vector: { region: 'EU', carbon_footprint: true, recycled_content: true, due_diligence: false } },
    events,
    logHead: { passport_id: passportId, size: eventCount, root: digest(`root-${eventCount}`, 43), signature: `eyJhbGciOiJFZDI1NTE5In0..${digest('head', 86)}` },
    pack: options.withPack === false ? null : `DPP1:${'6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDE'.repeat(20)}`,
    verdict: { valid: true, coverage: { log: { checked: eventCount, of: eventCount }, signatures: { checked: eventCount, of: eventCount }, pack: true, issuer_key: issuerKid } },
    keys: { issuerKeyring: jwkSet('issuer'), trustAnchorBundle: { roots: [digest('root', 43)], signature: `eyJhbGciOiJFZDI1NTE5In0..${digest('bundle', 86)}` }, trustKeyring: jwkSet('trust') },
  };
}
