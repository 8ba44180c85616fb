import { describe, expect, it } from 'vitest';
import { normalizeInstant } from '../../../subgraphs/registry/domain/index.js';

describe('normalizeInstant (RFC 3339)', () => {
  it.each([
    ['2027-02-18T00:00:00Z', '2027-02-18T00:00:00.000Z'],
    ['2027-02-18t00:00:00z', '2027-02-18T00:00:00.000Z'],
    ['2027-02-18T01:30:00+01:30', '2027-02-18T00:00:00.000Z'],
    ['2027-02-17T19:00:00.5-05:00', '2027-02-18T00:00:00.500Z'],
    ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['2027-02-18T00:00:00.123456789Z', '2027-02-18T00:00:00.123Z'],
  ])('normalises %s', (text, expected) => {
    expect(normalizeInstant(text)).toBe(expected);
  });

  it.each([
    '2027-02-18',
    '2027-02-18T00:00:00',
    '2023-02-29T00:00:00Z',
    '2027-04-31T00:00:00Z',
    '2027-02-18T24:00:00Z',
    '2027-02-18T00:60:00Z',
    '2016-12-31T23:59:60Z',
    '2027-02-18T00:00:00+24:00',
    '2027-02-18 00:00:00Z',
    ' 2027-02-18T00:00:00Z',
  ])('refuses %s', (text) => {
    expect(normalizeInstant(text)).toBeUndefined();
  });

  it('reads a full-date as the start of that UTC day only when allowed', () => {
    expect(normalizeInstant('2027-02-18', true)).toBe('2027-02-18T00:00:00.000Z');
    expect(normalizeInstant('2027-02-30', true)).toBeUndefined();
  });
});
