import { describe, expect, it } from 'vitest';
import {
  PROFILE_MANIFEST_EXAMPLES,
  appendVersion,
  latestVersions,
  nextVersion,
  supersessionChain,
  type NewVersionRequest,
  type RecordKind,
  type RecordVersion,
} from '../../../subgraphs/registry/domain/index.js';
import { registryErrorOf } from './helpers.js';

const T0 = new Date('2026-01-10T12:00:00Z');
const T1 = new Date('2026-02-10T12:00:00Z');
const T2 = new Date('2026-03-10T12:00:00Z');

/** Builds a history by appending each request in turn, as the data layer would. */
function build(kind: RecordKind, id: string, requests: readonly Omit<NewVersionRequest, 'expectedVersion'>[]): RecordVersion[] {
  const dates = [T0, T1, T2];
  return requests.reduce<RecordVersion[]>((history, request, index) => [...history, appendVersion(kind, id, history, { ...request, expectedVersion: history.length }, dates[index]!)], []);
}

describe('nextVersion: optimistic concurrency', () => {
  it('creates at 0 and appends on the latest version', () => {
    expect(nextVersion(0, 0)).toBe(1);
    expect(nextVersion(3, 3)).toBe(4);
  });

  it('refuses a stale or future expected version with STALE_VERSION (409)', () => {
    for (const [current, expected] of [
      [3, 2],
      [3, 4],
      [0, 1],
      [1, 0],
    ] as const) {
      const error = registryErrorOf(() => nextVersion(current, expected));
      expect(error.code).toBe('STALE_VERSION');
      expect(error.status).toBe(409);
    }
  });

  it('refuses an expected version that is not a non-negative integer', () => {
    for (const expected of [-1, 1.5, '1', null, undefined, Number.NaN, 2 ** 53]) {
      expect(registryErrorOf(() => nextVersion(1, expected)).code).toBe('INVALID_VERSION');
    }
  });
});

describe('appendVersion', () => {
  it('numbers versions from 1, links each to its predecessor and leaves the history untouched', () => {
    const history = build('item', 'battery.ev', [{ body: { label: 'EV' } }, { body: { label: 'EV batteries' } }]);
    const frozen = structuredClone(history);
    const third = appendVersion('item', 'battery.ev', history, { expectedVersion: 2, body: { label: 'Electric vehicle batteries' } }, T2);
    expect(history).toEqual(frozen);
    expect(history.map((v) => [v.version, v.supersedes])).toEqual([
      [1, null],
      [2, 1],
    ]);
    expect(third).toMatchObject({ id: 'battery.ev', kind: 'item', version: 3, supersedes: 2, status: 'active', createdAt: T2.toISOString() });
    expect(third.body).toEqual({ label: 'Electric vehicle batteries' });
  });

  it('refuses a version built on a stale one, as two concurrent writers would', () => {
    const history = build('service', 'passport-issuer', [{ body: { v: 1 } }]);
    const winner = appendVersion('service', 'passport-issuer', history, { expectedVersion: 1, body: { v: 2 } }, T1);
    const error = registryErrorOf(() => appendVersion('service', 'passport-issuer', [...history, winner], { expectedVersion: 1, body: { v: 'lost' } }, T1));
    expect(error.code).toBe('STALE_VERSION');
  });

  it('checks the id only when creating, and refuses reserved root ids', () => {
    expect(registryErrorOf(() => appendVersion('generic', 'models', [], { expectedVersion: 0, body: {} }, T0)).code).toBe('RESERVED_ID');
    expect(registryErrorOf(() => appendVersion('item', 'Bad Id', [], { expectedVersion: 0, body: {} }, T0)).code).toBe('INVALID_ID');
  });

  it('carries the status forward by default and starts active', () => {
    const drafts = build('item', 'x', [{ body: {}, status: 'draft' }, { body: {} }]);
    expect(drafts.map((v) => v.status)).toEqual(['draft', 'draft']);
    expect(build('item', 'y', [{ body: {} }])[0]!.status).toBe('active');
  });

  it('allows only the documented status successions; withdrawn is final', () => {
    const allowed: [string, string][] = [
      ['draft', 'draft'],
      ['draft', 'active'],
      ['draft', 'withdrawn'],
      ['active', 'active'],
      ['active', 'deprecated'],
      ['active', 'withdrawn'],
      ['deprecated', 'deprecated'],
      ['deprecated', 'active'],
      ['deprecated', 'withdrawn'],
    ];
    const statuses = ['draft', 'active', 'deprecated', 'withdrawn'];
    for (const from of statuses) {
      for (const to of statuses) {
        const history = build('item', 'x', [{ body: {}, status: from }]);
        const attempt = () => appendVersion('item', 'x', history, { expectedVersion: 1, body: {}, status: to }, T1);
        if (allowed.some(([a, b]) => a === from && b === to)) expect(attempt().status, `${from} -> ${to}`).toBe(to);
        else expect(registryErrorOf(attempt).code, `${from} -> ${to}`).toBe('ILLEGAL_STATUS_TRANSITION');
      }
    }
  });

  it('refuses an unknown status, a non-object body and a non-JSON body', () => {
    const code = (request: Omit<NewVersionRequest, 'expectedVersion'>) => registryErrorOf(() => appendVersion('item', 'x', [], { expectedVersion: 0, ...request }, T0)).code;
    expect(code({ body: {}, status: 'retired' })).toBe('INVALID_RECORD');
    for (const body of [null, [], 'text', 3, { when: new Date(0) }, { n: Number.POSITIVE_INFINITY }, { f: () => 1 }, { u: undefined }]) {
      expect(code({ body }), String(body)).toBe('INVALID_RECORD');
    }
  });

  it('normalises the effective window to UTC and requires it to be non-empty', () => {
    const v = build('item', 'x', [{ body: {}, effectiveFrom: '2027-02-18T01:00:00+01:00', effectiveTo: '2028-01-01T00:00:00Z' }])[0]!;
    expect([v.effectiveFrom, v.effectiveTo]).toEqual(['2027-02-18T00:00:00.000Z', '2028-01-01T00:00:00.000Z']);
    for (const window of [
      { effectiveFrom: '2027-01-01T00:00:00Z', effectiveTo: '2027-01-01T00:00:00Z' },
      { effectiveFrom: '2027-01-02T00:00:00Z', effectiveTo: '2027-01-01T00:00:00Z' },
      { effectiveFrom: '2027-02-30T00:00:00Z' },
      { effectiveFrom: '2027-01-01' },
      { effectiveTo: 'tomorrow' },
    ]) {
      expect(registryErrorOf(() => build('item', 'x', [{ body: {}, ...window }])).code, JSON.stringify(window)).toBe('INVALID_RECORD');
    }
  });

  it("takes a profile manifest's window from the manifest and refuses a different one", () => {
    const manifest = structuredClone(PROFILE_MANIFEST_EXAMPLES[1]);
    const v = build('generic', manifest.profile_id, [{ body: manifest }])[0]!;
    expect([v.effectiveFrom, v.effectiveTo]).toEqual(['2026-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z']);
    const error = registryErrorOf(() => build('generic', manifest.profile_id, [{ body: manifest, effectiveFrom: '2025-01-01T00:00:00Z' }]));
    expect(error.code).toBe('INVALID_RECORD');
  });

  it('validates a generic profile manifest body and its id', () => {
    const manifest = structuredClone(PROFILE_MANIFEST_EXAMPLES[1]) as Record<string, unknown>;
    expect(registryErrorOf(() => build('generic', 'another-id', [{ body: manifest }])).message).toMatch(/profile_id/);
    const broken = { ...manifest, jurisdictions: ['Europe'] };
    const error = registryErrorOf(() => build('generic', 'eu-textile-apparel', [{ body: broken }]));
    expect(error.code).toBe('INVALID_RECORD');
    expect(error.issues.map((issue) => [issue.pointer, issue.keyword])).toEqual([['/jurisdictions/0', 'pattern']]);
    // Any other generic body is free-form JSON.
    expect(build('generic', 'note', [{ body: { type: 'Note', text: 'free' } }])[0]!.version).toBe(1);
  });

  it('refuses a model whose schema fails strict compilation or whose example fails it', () => {
    const model = (schema: unknown) => ({ title: 'm', schema });
    expect(registryErrorOf(() => build('model', 'm', [{ body: model({ type: 'object', properties: { a: { minimum: 1 } } }) }])).code).toBe('INVALID_SCHEMA');
    const bad = registryErrorOf(() => build('model', 'm', [{ body: model({ type: 'string', examples: ['ok', 7] }) }]));
    expect(bad.code).toBe('INVALID_RECORD');
    expect(bad.issues.map((issue) => [issue.pointer, issue.keyword])).toEqual([['/schema/examples/1', 'type']]);
    const meta = registryErrorOf(() => build('model', 'm', [{ body: model({ type: 'strng' }) }]));
    expect(meta.code).toBe('INVALID_SCHEMA');
    expect(meta.issues.every((issue) => issue.pointer === '/schema/type')).toBe(true);
    expect(registryErrorOf(() => build('model', 'm', [{ body: { schema: { type: 'string' } } }])).issues[0]!.params).toEqual({ missingProperty: 'title' });
  });

  it('rejects a history of another record as a programming error', () => {
    const history = build('item', 'x', [{ body: {} }]);
    expect(() => appendVersion('service', 'x', history, { expectedVersion: 1, body: {} }, T1)).toThrow(/another record/);
  });
});

describe('supersessionChain', () => {
  it('lists every version with predecessor, successor and the current one, in any input order', () => {
    const history = build('cross_register_mapping', 'm', [{ body: { n: 1 } }, { body: { n: 2 } }, { body: { n: 3 }, status: 'deprecated' }]);
    const chain = supersessionChain([history[2]!, history[0]!, history[1]!]);
    expect(chain).toMatchObject({ kind: 'cross_register_mapping', id: 'm', current: 3 });
    expect(chain.versions.map((l) => [l.version, l.predecessor, l.successor, l.current, l.status])).toEqual([
      [1, null, 2, false, 'active'],
      [2, 1, 3, false, 'active'],
      [3, 2, null, true, 'deprecated'],
    ]);
    expect(chain.versions.map((l) => l.createdAt)).toEqual([T0, T1, T2].map((t) => t.toISOString()));
  });

  it('treats a gap, a broken link or mixed records as a corrupted store', () => {
    const history = build('item', 'x', [{ body: {} }, { body: {} }, { body: {} }]);
    expect(() => supersessionChain([history[0]!, history[2]!])).toThrow(/breaks the chain/);
    expect(() => supersessionChain([history[0]!, { ...history[1]!, supersedes: null }])).toThrow(/breaks the chain/);
    expect(() => supersessionChain([history[0]!, { ...history[1]!, id: 'y' }])).toThrow(/mixed/);
    expect(() => supersessionChain([])).toThrow(RangeError);
  });
});

describe('latestVersions', () => {
  it('keeps the highest version of each (kind, id)', () => {
    const a = build('item', 'a', [{ body: {} }, { body: {} }]);
    const b = build('service', 'a', [{ body: {} }]);
    expect(latestVersions([...b, ...a].reverse()).map((v) => [v.kind, v.id, v.version])).toEqual([
      ['item', 'a', 2],
      ['service', 'a', 1],
    ]);
  });
});
