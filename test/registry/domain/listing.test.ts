import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, appendVersion, decodeCursor, encodeCursor, listRecords, parseListQuery, type RecordVersion } from '../../../subgraphs/registry/domain/index.js';
import { registryErrorOf } from './helpers.js';

function item(id: string, status: string, createdAt: string): RecordVersion {
  return appendVersion('item', id, [], { expectedVersion: 0, body: {}, status }, new Date(createdAt));
}

// 120 items, ids not in creation order, a third of them drafts.
const items = Array.from({ length: 120 }, (_, n) => item(`item-${String((n * 37) % 120).padStart(3, '0')}`, n % 3 === 0 ? 'draft' : 'active', `2026-01-01T00:${String(n % 60).padStart(2, '0')}:00Z`));

describe('cursors', () => {
  it('round-trip the last id and are URL-safe', () => {
    const cursor = encodeCursor('battery.ev');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toBe('battery.ev');
    expect(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).toEqual({ after: 'battery.ev' });
  });

  it.each(['', '!!!', 'bm90IGpzb24', Buffer.from('{"after":"Bad Id"}').toString('base64url'), Buffer.from('{"after":"a","x":1}').toString('base64url'), Buffer.from('null').toString('base64url')])(
    'refuses %j with INVALID_QUERY',
    (cursor) => {
      expect(registryErrorOf(() => decodeCursor(cursor)).code).toBe('INVALID_QUERY');
    },
  );
});

describe('parseListQuery', () => {
  it('defaults to the first page of 50 with no filters', () => {
    expect(parseListQuery({})).toEqual({ limit: DEFAULT_PAGE_SIZE, after: null, statuses: null, idPrefix: null, updatedSince: null });
    expect(DEFAULT_PAGE_SIZE).toBe(50);
    expect(MAX_PAGE_SIZE).toBe(500);
  });

  it('reads query-string and typed values alike', () => {
    const query = parseListQuery({
      limit: '500',
      cursor: encodeCursor('item-010'),
      status: 'active,deprecated',
      id_prefix: 'item-0',
      updated_since: '2026-01-01T02:00:00+02:00',
    });
    expect(query).toEqual({ limit: 500, after: 'item-010', statuses: ['active', 'deprecated'], idPrefix: 'item-0', updatedSince: '2026-01-01T00:00:00.000Z' });
    expect(parseListQuery({ limit: 1, status: ['draft', 'draft'] })).toMatchObject({ limit: 1, statuses: ['draft'] });
  });

  it.each([
    [{ limit: '0' }],
    [{ limit: '501' }],
    [{ limit: 2.5 }],
    [{ limit: '10abc' }],
    [{ limit: '' }],
    [{ status: 'retired' }],
    [{ status: '' }],
    [{ status: 'active,' }],
    [{ id_prefix: 'Item' }],
    [{ id_prefix: '' }],
    [{ updated_since: '2026-01-01' }],
    [{ cursor: 'garbage!' }],
    [{ cursor: 5 }],
    [{ page: '2' }],
  ])('refuses %j with INVALID_QUERY (400)', (params) => {
    const error = registryErrorOf(() => parseListQuery(params));
    expect(error.code).toBe('INVALID_QUERY');
    expect(error.status).toBe(400);
  });
});

describe('listRecords', () => {
  it('pages through every record exactly once, in id order', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = listRecords(items, parseListQuery(cursor === undefined ? { limit: '25' } : { limit: '25', cursor }));
      expect(page.items.length).toBeLessThanOrEqual(25);
      seen.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(5);
    expect(seen).toEqual(items.map((r) => r.id).sort());
    expect(new Set(seen).size).toBe(120);
  });

  it('ends with a null cursor when the last page is exactly full', () => {
    const first = listRecords(items, parseListQuery({ limit: '60' }));
    expect(first.nextCursor).not.toBeNull();
    const second = listRecords(items, parseListQuery({ limit: '60', cursor: first.nextCursor as string }));
    expect(second.items).toHaveLength(60);
    expect(second.nextCursor).toBeNull();
  });

  it('filters by status, id prefix and update time', () => {
    const drafts = listRecords(items, parseListQuery({ status: 'draft', limit: 500 }));
    expect(drafts.items).toHaveLength(40);
    expect(drafts.items.every((r) => r.status === 'draft')).toBe(true);

    const prefixed = listRecords(items, parseListQuery({ id_prefix: 'item-11' }));
    expect(prefixed.items.map((r) => r.id)).toEqual(Array.from({ length: 10 }, (_, n) => `item-11${n}`));

    const recent = listRecords(items, parseListQuery({ updated_since: '2026-01-01T00:55:00Z', limit: 500 }));
    // Creation minutes run 0..59 twice over, so minutes 55..59 hold two items each.
    expect(recent.items).toHaveLength(10);
    expect(recent.items.every((r) => r.createdAt >= '2026-01-01T00:55:00.000Z')).toBe(true);
  });
});
