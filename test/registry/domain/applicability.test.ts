import { describe, expect, it } from 'vitest';
import {
  PROFILE_MANIFEST_EXAMPLES,
  appendVersion,
  applicableAt,
  categoryCovers,
  jurisdictionCovers,
  parseApplicabilityQuery,
  type RecordKind,
  type RecordVersion,
} from '../../../subgraphs/registry/domain/index.js';
import { registryErrorOf } from './helpers.js';

interface Step {
  readonly categories?: readonly string[];
  readonly status?: string;
  readonly from?: string;
  readonly to?: string;
  readonly body?: unknown;
}

function record(kind: RecordKind, id: string, steps: readonly Step[]): RecordVersion[] {
  return steps.reduce<RecordVersion[]>((history, step) => {
    const body = step.body ?? {
      title: id,
      schema: { type: 'object' },
      applicability: { product_categories: step.categories ?? ['battery.ev'], jurisdictions: ['EU'] },
    };
    const request = { expectedVersion: history.length, body, status: step.status, effectiveFrom: step.from, effectiveTo: step.to };
    return [...history, appendVersion(kind, id, history, request, new Date('2026-01-01T00:00:00Z'))];
  }, []);
}

const at = (instant: string, productCategory = 'battery.ev', jurisdiction = 'DE') => ({ productCategory, jurisdiction, at: instant });
const refs = (versions: readonly RecordVersion[], query: ReturnType<typeof at>) => applicableAt(versions, query).map((a) => a.ref);

describe('applicableAt', () => {
  const model = record('model', 'battery-passport', [{ from: '2027-02-18T00:00:00Z' }, { from: '2028-08-18T00:00:00Z' }, { status: 'withdrawn', from: '2035-01-01T00:00:00Z' }]);

  it('answers the version effective at the instant, on both sides of a version change', () => {
    expect(refs(model, at('2027-02-17T23:59:59.999Z'))).toEqual([]);
    expect(refs(model, at('2027-02-18T00:00:00.000Z'))).toEqual(['battery-passport@1']);
    expect(refs(model, at('2028-08-17T23:59:59.999Z'))).toEqual(['battery-passport@1']);
    expect(refs(model, at('2028-08-18T00:00:00.000Z'))).toEqual(['battery-passport@2']);
    expect(refs(model, at('2034-12-31T23:59:59.999Z'))).toEqual(['battery-passport@2']);
  });

  it('stops at a withdrawal and never applies a draft', () => {
    expect(refs(model, at('2035-01-01T00:00:00.000Z'))).toEqual([]);
    const draft = record('model', 'draft-model', [{ status: 'draft' }]);
    expect(refs(draft, at('2030-01-01T00:00:00.000Z'))).toEqual([]);
    const promoted = record('model', 'promoted', [{ status: 'draft' }, { status: 'active', from: '2029-01-01T00:00:00Z' }]);
    expect(refs(promoted, at('2028-01-01T00:00:00.000Z'))).toEqual([]);
    expect(refs(promoted, at('2029-01-01T00:00:00.000Z'))).toEqual(['promoted@2']);
  });

  it('keeps applying a deprecated version', () => {
    const deprecated = record('model', 'old', [{}, { status: 'deprecated' }]);
    expect(applicableAt(deprecated, at('2030-01-01T00:00:00.000Z')).map((a) => [a.ref, a.status])).toEqual([['old@2', 'deprecated']]);
  });

  it('decides by the scope of the version in force, so a narrowed scope stays narrow', () => {
    const narrowed = record('model', 'narrowed', [{ categories: ['battery'] }, { categories: ['battery.ev'], from: '2028-01-01T00:00:00Z' }]);
    expect(refs(narrowed, at('2027-06-01T00:00:00.000Z', 'battery.lmt'))).toEqual(['narrowed@1']);
    expect(refs(narrowed, at('2028-06-01T00:00:00.000Z', 'battery.lmt'))).toEqual([]);
    expect(refs(narrowed, at('2028-06-01T00:00:00.000Z', 'battery.ev'))).toEqual(['narrowed@2']);
  });

  it('matches categories by hierarchy and EU by member state', () => {
    const broad = record('model', 'broad', [{ categories: ['battery'] }]);
    expect(refs(broad, at('2030-01-01T00:00:00.000Z', 'battery.ev.passenger-car'))).toEqual(['broad@1']);
    expect(refs(broad, at('2030-01-01T00:00:00.000Z', 'batteryx'))).toEqual([]);
    expect(refs(broad, at('2030-01-01T00:00:00.000Z', 'battery', 'CH'))).toEqual([]);
    expect(refs(broad, at('2030-01-01T00:00:00.000Z', 'battery', 'EU'))).toEqual(['broad@1']);
    expect(applicableAt(broad, { at: '2030-01-01T00:00:00.000Z' }).map((a) => a.ref)).toEqual(['broad@1']);
  });

  it('answers profiles within their manifest window, with their model, after the models', () => {
    const manifest = structuredClone(PROFILE_MANIFEST_EXAMPLES[1]);
    const profile = record('generic', manifest.profile_id, [{ body: manifest }]);
    const textile = record('model', 'textile-product', [{ categories: ['textile.apparel'] }]);
    const all = [...profile, ...textile, ...record('generic', 'unrelated', [{ body: { type: 'Note' } }])];
    const inside = applicableAt(all, at('2029-12-31T23:59:59.999Z', 'textile.apparel', 'PT'));
    expect(inside.map((a) => [a.kind, a.ref, a.model])).toEqual([
      ['model', 'textile-product@1', undefined],
      ['profile', 'eu-textile-apparel@1', 'textile-product@1'],
    ]);
    expect(refs(all, at('2030-01-01T00:00:00.000Z', 'textile.apparel', 'PT'))).toEqual(['textile-product@1']);
    expect(refs(all, at('2025-12-31T23:59:59.999Z', 'textile.apparel', 'PT'))).toEqual(['textile-product@1']);
  });

  it('ignores records of other kinds', () => {
    const item = record('item', 'battery.ev', [{}]);
    expect(refs(item, at('2030-01-01T00:00:00.000Z'))).toEqual([]);
  });
});

describe('scope matching', () => {
  it('covers a category and its descendants only', () => {
    expect(categoryCovers('battery', 'battery')).toBe(true);
    expect(categoryCovers('battery', 'battery.ev')).toBe(true);
    expect(categoryCovers('battery.ev', 'battery')).toBe(false);
    expect(categoryCovers('battery', 'battery-pack')).toBe(false);
  });

  it('covers the 27 member states with EU, and nothing else', () => {
    for (const state of ['DE', 'FR', 'GR', 'HU', 'SE', 'IE', 'CY']) expect(jurisdictionCovers('EU', state), state).toBe(true);
    for (const other of ['GB', 'NO', 'CH', 'EL', 'US']) expect(jurisdictionCovers('EU', other), other).toBe(false);
    expect(jurisdictionCovers('DE', 'EU')).toBe(false);
  });
});

describe('parseApplicabilityQuery', () => {
  const now = new Date('2026-05-01T10:00:00Z');

  it('reads snake_case parameters and normalises them', () => {
    expect(parseApplicabilityQuery({ product_category: 'battery.ev', jurisdiction: 'de', at: '2027-03-01T01:00:00+01:00' }, now)).toEqual({
      productCategory: 'battery.ev',
      jurisdiction: 'DE',
      at: '2027-03-01T00:00:00.000Z',
    });
    expect(parseApplicabilityQuery({ at: '2027-03-01' }, now).at).toBe('2027-03-01T00:00:00.000Z');
    expect(parseApplicabilityQuery({}, now)).toEqual({ productCategory: undefined, jurisdiction: undefined, at: now.toISOString() });
  });

  it.each([
    [{ category: 'battery' }],
    [{ product_category: 'Battery' }],
    [{ product_category: 'battery..ev' }],
    [{ jurisdiction: 'Europe' }],
    [{ jurisdiction: 7 }],
    [{ at: 'now' }],
    [{ at: '2027-13-01' }],
  ])('refuses %j with INVALID_QUERY', (params) => {
    expect(registryErrorOf(() => parseApplicabilityQuery(params, now)).code).toBe('INVALID_QUERY');
  });
});
