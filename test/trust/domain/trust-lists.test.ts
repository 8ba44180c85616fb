import { describe, expect, it } from 'vitest';
import { registerTrustList, trustListAt, upsertTrustListEntry, type TrustListChange } from '../../../subgraphs/trust/domain/index.js';
import { t } from './fixtures.js';

const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const TSA = 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST';

/** Applies a sequence of upserts, failing the test on any refusal. */
function record(history: TrustListChange[], input: unknown, now: string): TrustListChange[] {
  const result = upsertTrustListEntry(history, input, t(now));
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result.value.change ? [...history, result.value.change] : history;
}

function registered(): TrustListChange[] {
  const result = registerTrustList([], { jurisdiction: 'de', framework: 'ESPR', next_update: '2025-07-01T00:00:00Z' }, t('2025-01-01T00:00:00Z'));
  if (!result.ok) throw new Error(result.message);
  return [result.value];
}

describe('registerTrustList', () => {
  it('records sequence number 1 at the registration instant', () => {
    expect(registered()).toEqual([
      {
        change: 'registration',
        sequence_number: 1,
        recorded_at: '2025-01-01T00:00:00.000Z',
        next_update: '2025-07-01T00:00:00Z',
        jurisdiction: 'DE',
        framework: 'ESPR',
      },
    ]);
  });

  it('defaults next_update to 180 days after issue, in whole seconds', () => {
    const result = registerTrustList([], { jurisdiction: 'FR', framework: 'ESPR' }, t('2025-01-01T00:00:00.302Z'));
    expect(result).toMatchObject({ ok: true, value: { next_update: '2025-06-30T00:00:00Z' } });
  });

  it.each([
    ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z'],
    ['2030-01-01T00:00:00.250Z', '2030-01-01T00:00:00.250Z'],
    ['2030-01-01T00:00:00.000001Z', '2030-01-01T00:00:00.000001Z'],
    ['2030-01-01T02:00:00+02:00', '2030-01-01T00:00:00Z'],
  ])('writes next_update %s as %s: no fraction digits it did not have, in UTC', (given, written) => {
    const result = registerTrustList([], { jurisdiction: 'FR', framework: 'ESPR', next_update: given }, t('2025-01-01T00:00:00.302Z'));
    expect(result).toMatchObject({ ok: true, value: { next_update: written } });
  });

  it.each([
    [{ jurisdiction: 'Germany', framework: 'ESPR' }, 'INVALID_TRUST_LIST'],
    [{ jurisdiction: 'DE', framework: '' }, 'INVALID_TRUST_LIST'],
    [{ jurisdiction: 'DE', framework: 'ESPR', next_update: '2024-12-31T00:00:00Z' }, 'INVALID_TRUST_LIST'],
    [{ jurisdiction: 'DE', framework: 'ESPR', entries: [] }, 'INVALID_TRUST_LIST'],
  ])('refuses %j', (input, code) => {
    expect(registerTrustList([], input, t('2025-01-01T00:00:00Z'))).toMatchObject({ ok: false, code });
  });

  it('refuses a second registration', () => {
    expect(registerTrustList(registered(), { jurisdiction: 'DE', framework: 'ESPR' }, t('2025-01-02T00:00:00Z'))).toMatchObject({
      ok: false,
      code: 'TRUST_LIST_EXISTS',
    });
  });
});

describe('an append-only list and what it said when', () => {
  let history = registered();
  history = record(history, { id: 'acme-ca', service_type: CA_QC, name: 'ACME CA', node_id: 'acme' }, '2025-01-10T00:00:00Z');
  history = record(history, { id: 'tsa', service_type: TSA }, '2025-01-20T00:00:00Z');
  history = record(history, { id: 'acme-ca', service_type: CA_QC, name: 'ACME CA', node_id: 'acme' }, '2025-01-25T00:00:00Z'); // unchanged
  history = record(history, { id: 'acme-ca', superseded_at: '2025-02-01T00:00:00Z' }, '2025-03-01T00:00:00Z'); // retroactive withdrawal
  history = record(history, { id: 'acme-ca' }, '2025-04-01T00:00:00Z'); // granted again

  it('bumps the sequence number once per change, and not for an unchanged restatement', () => {
    expect(history.map((change) => change.sequence_number)).toEqual([1, 2, 3, 4, 5]);
    expect(history.map((change) => change.recorded_at)).toEqual([
      '2025-01-01T00:00:00.000Z',
      '2025-01-10T00:00:00.000Z',
      '2025-01-20T00:00:00.000Z',
      '2025-03-01T00:00:00.000Z',
      '2025-04-01T00:00:00.000Z',
    ]);
  });

  it('keeps the update period of the registration', () => {
    expect(trustListAt(history)!.next_update).toBe('2025-09-29T00:00:00Z');
  });

  it('says nothing before registration', () => {
    expect(trustListAt(history, t('2024-12-31T23:59:59.999Z'))).toBeUndefined();
  });

  it('reconstructs each version exactly', () => {
    expect(trustListAt(history, t('2025-01-01T00:00:00Z'))).toEqual({
      jurisdiction: 'DE',
      framework: 'ESPR',
      sequence_number: 1,
      issued_at: '2025-01-01T00:00:00.000Z',
      next_update: '2025-07-01T00:00:00Z',
      entries: [],
    });
    const acmeGranted = {
      id: 'acme-ca',
      service_type: CA_QC,
      name: 'ACME CA',
      node_id: 'acme',
      status: 'granted',
      status_starting_time: '2025-01-10T00:00:00.000Z',
      history: [],
    };
    expect(trustListAt(history, t('2025-02-15T00:00:00Z'))).toMatchObject({
      sequence_number: 3,
      issued_at: '2025-01-20T00:00:00.000Z',
      entries: [acmeGranted, { id: 'tsa', status: 'granted', status_starting_time: '2025-01-20T00:00:00.000Z' }],
    });
    // Recorded on 1 March with effect from 1 February: from then on the list says withdrawn since February.
    const withdrawn = trustListAt(history, t('2025-03-01T00:00:00Z'))!;
    expect(withdrawn.sequence_number).toBe(4);
    expect(withdrawn.entries[0]).toEqual({
      ...acmeGranted,
      status: 'withdrawn',
      status_starting_time: '2025-02-01T00:00:00.000Z',
      history: [{ service_type: CA_QC, name: 'ACME CA', node_id: 'acme', status: 'granted', status_starting_time: '2025-01-10T00:00:00.000Z' }],
    });
    const regranted = trustListAt(history, t('2025-05-01T00:00:00Z'))!;
    expect(regranted.sequence_number).toBe(5);
    expect(regranted.entries[0]).toMatchObject({ status: 'granted', status_starting_time: '2025-04-01T00:00:00.000Z' });
    expect(regranted.entries[0]!.history.map((instance) => instance.status)).toEqual(['withdrawn', 'granted']);
  });

  it('answers the same whatever order the facts are loaded in', () => {
    expect(trustListAt([...history].reverse(), t('2025-03-15T00:00:00Z'))).toEqual(trustListAt(history, t('2025-03-15T00:00:00Z')));
  });
});

describe('upsertTrustListEntry refuses', () => {
  const base = record(registered(), { id: 'acme-ca', service_type: CA_QC }, '2025-01-10T00:00:00Z');
  const now = t('2025-02-01T00:00:00Z');

  it.each([
    [{ id: 'acme-ca', superseded_at: '2025-02-01T00:00:01Z' }, 'INVALID_ENTRY'], // in the future
    [{ id: 'acme-ca', superseded_at: '2025-01-09T00:00:00Z' }, 'INVALID_ENTRY'], // before the grant
    [{ id: 'acme-ca', superseded_at: 'soon' }, 'INVALID_ENTRY'],
    [{ id: 'new', service_type: 'not a uri' }, 'INVALID_ENTRY'],
    [{ id: 'new' }, 'INVALID_ENTRY'],
    [{ id: 'acme-ca', status: 'withdrawn' }, 'INVALID_ENTRY'],
    [{ id: 'other', superseded_at: '2025-01-20T00:00:00Z' }, 'UNKNOWN_ENTRY'],
  ])('%j with %s', (input, code) => {
    expect(upsertTrustListEntry(base, input, now)).toMatchObject({ ok: false, code });
  });

  it('an entry on a list that does not exist', () => {
    expect(upsertTrustListEntry([], { id: 'x', service_type: CA_QC }, now)).toMatchObject({ ok: false, code: 'UNKNOWN_TRUST_LIST' });
  });

  it('a second withdrawal at another instant, and accepts the same one as a restatement', () => {
    const withdrawn = record(base, { id: 'acme-ca', superseded_at: '2025-01-20T00:00:00Z' }, '2025-02-01T00:00:00Z');
    expect(upsertTrustListEntry(withdrawn, { id: 'acme-ca', superseded_at: '2025-01-21T00:00:00Z' }, now)).toMatchObject({ ok: false, code: 'ENTRY_CONFLICT' });
    expect(upsertTrustListEntry(withdrawn, { id: 'acme-ca', superseded_at: '2025-01-20T01:00:00+01:00' }, now)).toMatchObject({
      ok: true,
      value: { change: undefined, list: { sequence_number: 3 } },
    });
  });

  it('nothing when the clock steps back: the change is recorded at the previous instant', () => {
    const result = upsertTrustListEntry(base, { id: 'tsa', service_type: TSA }, t('2025-01-05T00:00:00Z'));
    expect(result).toMatchObject({ ok: true, value: { change: { sequence_number: 3, recorded_at: '2025-01-10T00:00:00.000Z' } } });
  });
});
