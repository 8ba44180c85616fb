import { describe, expect, it } from 'vitest';
import { formatInstant, intervalContains, parseInstant, parseInterval } from '../../../subgraphs/trust/domain/index.js';
import { t } from './fixtures.js';

describe('RFC 3339 instants', () => {
  it.each([
    ['1985-04-12T23:20:50.52Z', t('1985-04-12T23:20:50.520Z')], // RFC 3339 §5.8 examples
    ['1996-12-19T16:39:57-08:00', t('1996-12-20T00:39:57Z')],
    ['1990-12-31T15:59:59-08:00', t('1990-12-31T23:59:59Z')],
    ['1937-01-01T12:00:27.87+00:20', t('1937-01-01T11:40:27.870Z')],
    ['2024-02-29t10:00:00z', t('2024-02-29T10:00:00Z')],
    ['2024-01-01T00:00:00-00:00', t('2024-01-01T00:00:00Z')],
  ])('parses %s', (text, expected) => {
    expect(parseInstant(text)).toBe(expected);
  });

  it('keeps microseconds and truncates finer digits', () => {
    expect(parseInstant('2024-01-01T00:00:00.123456789Z')).toBe(t('2024-01-01T00:00:00.123Z') + 456);
    expect(parseInstant('2024-01-01T00:00:00.000001Z')! - parseInstant('2024-01-01T00:00:00Z')!).toBe(1);
  });

  it.each([
    '1990-12-31T23:59:60Z', // leap second: refused, see time.ts
    '2023-02-29T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01 00:00:00Z',
    '2024-01-01T00:00:00',
    '2024-01-01T00:00:00+24:00',
    '2024-01-01T00:00:00.Z',
    '20240101T000000Z',
    '',
  ])('refuses %j', (text) => {
    expect(parseInstant(text)).toBeUndefined();
  });

  it('formats as UTC like Date#toISOString, with microseconds only when present', () => {
    expect(formatInstant(t('2024-05-06T07:08:09.010Z'))).toBe('2024-05-06T07:08:09.010Z');
    expect(formatInstant(t('2024-05-06T07:08:09.010Z') + 7)).toBe('2024-05-06T07:08:09.010007Z');
    expect(formatInstant(parseInstant('1996-12-19T16:39:57-08:00')!)).toBe('1996-12-20T00:39:57.000Z');
  });
});

describe('intervals', () => {
  it('reads start/end with either end open, half-open membership', () => {
    const closed = parseInterval('2024-01-01T00:00:00Z/2024-02-01T00:00:00Z')!;
    expect(intervalContains(closed, t('2024-01-01T00:00:00Z'))).toBe(true);
    expect(intervalContains(closed, t('2024-02-01T00:00:00Z'))).toBe(false);
    expect(parseInterval('2024-01-01T00:00:00Z/..')).toEqual({ start: t('2024-01-01T00:00:00Z') });
    expect(parseInterval('/2024-01-01T00:00:00Z')).toEqual({ end: t('2024-01-01T00:00:00Z') });
    expect(parseInterval('../..')).toEqual({});
  });

  it.each(['2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z/2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z/2024-01-01T00:00:00Z', 'a/b', '2024-01-01T00:00:00Z/P1D'])('refuses %j', (text) => {
    expect(parseInterval(text)).toBeUndefined();
  });
});
