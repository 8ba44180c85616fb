import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../../lib/crypto/index.js';
import { buildAnchorBundle, registerTrustList, trustListAt, upsertNode, upsertTrustListEntry, validateWitnessSet, type TrustList, type TrustNode } from '../../../subgraphs/trust/domain/index.js';
import { ed25519Key, t } from './fixtures.js';

const iat = Date.UTC(2024, 0, 1) / 1000;

function build(input: Record<string, unknown>): TrustNode {
  const result = upsertNode(undefined, input);
  if (!result.ok) throw new Error(result.message);
  return result.value;
}

function list(jurisdiction: string): TrustList {
  const registered = registerTrustList([], { jurisdiction, framework: 'ESPR' }, t('2025-01-01T00:00:00Z'));
  if (!registered.ok) throw new Error(registered.message);
  const upserted = upsertTrustListEntry([registered.value], { id: `${jurisdiction}-ca`, service_type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC' }, t('2025-01-02T00:00:00Z'));
  if (!upserted.ok) throw new Error(upserted.message);
  return trustListAt([registered.value, upserted.value.change!])!;
}

const rotatedKey = { ...ed25519Key().jwk, iat, exp: Date.UTC(2024, 5, 1) / 1000, revoked: { revoked_at: Date.UTC(2024, 4, 1) / 1000, reason: 'superseded' } };
const nodes = [
  build({ id: 'root-global', kind: 'root', keys: [{ ...ed25519Key().jwk, iat }, rotatedKey] }),
  build({ id: 'root-de', kind: 'root', jurisdiction: 'DE', keys: [{ ...ed25519Key().jwk, iat }] }),
  build({ id: 'root-de-by', kind: 'root', jurisdiction: 'DE-BY', keys: [{ ...ed25519Key().jwk, iat }] }),
  build({ id: 'root-fr', kind: 'root', jurisdiction: 'FR', keys: [{ ...ed25519Key().jwk, iat }] }),
  build({ id: 'council', kind: 'quorum', threshold: 2, group_key: ed25519Key().jwk, keys: [] }),
  build({ id: 'acme', kind: 'issuer', jurisdiction: 'DE', keys: [{ ...ed25519Key().jwk, iat }] }),
];
const witnessSet = validateWitnessSet({ m: 1, keys: [ed25519Key().jwk] });
const lists = [list('FR'), list('DE'), list('DE-BY')];

describe('buildAnchorBundle', () => {
  it('gathers roots with all their keys, quorums, the witness set and list heads, sorted', () => {
    const bundle = buildAnchorBundle({ nodes, witnessSet: witnessSet.ok ? witnessSet.value : undefined, trustLists: lists, issuedAt: t('2025-03-01T00:00:00Z') });
    if (!bundle.ok) throw new Error(bundle.message);
    expect(bundle.value.issued_at).toBe('2025-03-01T00:00:00.000Z');
    expect(bundle.value.roots.map((root) => root.id)).toEqual(['root-de', 'root-de-by', 'root-fr', 'root-global']);
    expect(bundle.value.roots[3]!.keys).toHaveLength(2);
    expect(bundle.value.roots[3]!.keys[1]).toMatchObject({ revoked: { revoked_at: Date.UTC(2024, 4, 1) / 1000 } });
    expect(bundle.value.quorums).toEqual([{ id: 'council', keys: [], threshold: 2, group_key: nodes[4]!.group_key }]);
    expect(bundle.value.witness_set).toEqual(witnessSet.ok && witnessSet.value);
    expect(bundle.value.trust_lists.map((head) => [head.jurisdiction, head.sequence_number])).toEqual([
      ['DE', 2],
      ['DE-BY', 2],
      ['FR', 2],
    ]);
  });

  it('pins each list head by the SHA-256 of its canonical form', () => {
    const bundle = buildAnchorBundle({ nodes, trustLists: lists, issuedAt: t('2025-03-01T00:00:00Z') });
    const head = bundle.ok ? bundle.value.trust_lists.find((candidate) => candidate.jurisdiction === 'FR') : undefined;
    expect(head?.sha256).toBe(createHash('sha256').update(canonicalize(lists[0])).digest('base64url'));
    expect(bundle.ok && bundle.value.witness_set).toBeNull();
  });

  it('narrows to a jurisdiction: its anchors, its country, its subdivisions and the global ones', () => {
    const forCountry = buildAnchorBundle({ nodes, trustLists: lists, issuedAt: t('2025-03-01T00:00:00Z'), jurisdiction: 'de' });
    expect(forCountry.ok && forCountry.value.jurisdiction).toBe('DE');
    expect(forCountry.ok && forCountry.value.roots.map((root) => root.id)).toEqual(['root-de', 'root-de-by', 'root-global']);
    expect(forCountry.ok && forCountry.value.trust_lists.map((head) => head.jurisdiction)).toEqual(['DE', 'DE-BY']);
    const forRegion = buildAnchorBundle({ nodes, trustLists: lists, issuedAt: t('2025-03-01T00:00:00Z'), jurisdiction: 'DE-BY' });
    expect(forRegion.ok && forRegion.value.roots.map((root) => root.id)).toEqual(['root-de', 'root-de-by', 'root-global']);
    const forFrance = buildAnchorBundle({ nodes, trustLists: lists, issuedAt: t('2025-03-01T00:00:00Z'), jurisdiction: 'FR' });
    expect(forFrance.ok && forFrance.value.roots.map((root) => root.id)).toEqual(['root-fr', 'root-global']);
    expect(forFrance.ok && forFrance.value.quorums.map((quorum) => quorum.id)).toEqual(['council']);
  });

  it('refuses a malformed jurisdiction with INVALID_QUERY', () => {
    expect(buildAnchorBundle({ nodes, trustLists: lists, issuedAt: 0, jurisdiction: 'Deutschland' })).toMatchObject({ ok: false, code: 'INVALID_QUERY' });
  });
});
