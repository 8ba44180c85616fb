/** RFC 3339 instants and intervals as the services take them (DESIGN §3). */

/**
 * RFC 3339 `date-time`: `T` or `t` (or, as its §5.6 note allows by agreement, a space) between date
 * and time, `Z` or a numeric offset, any number of fraction digits.
 */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})([Tt ])(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days in a month of the proleptic Gregorian calendar (RFC 3339 §5.7). */
function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month);
}

/**
 * The instants the services take, in UTC: years 0001 to 9999. RFC 3339 writes four-digit years, so an
 * instant past 9999 in UTC (9999-12-31T23:59:59-23:59) could not be written back in an answer (Date
 * writes +010000-…), and PostgreSQL, which counts 1 BC as year 1 BC rather than 0, refuses year 0000
 * (22008); both lie well within what a timestamptz (4713 BC to 294276) and a Date (±275760) hold.
 */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** What an instant must be, as a refusal says it: `at must be ${INSTANT_EXPECTED}`. */
export const INSTANT_EXPECTED = 'an RFC 3339 date-time within years 0001 to 9999 in UTC, e.g. 2026-01-31T12:00:00Z';

/**
 * Checks every field's range: Date.parse alone would roll 2026-02-30 over to March 2. Leap seconds
 * (`:60`) are refused, as JavaScript time cannot represent them; so are instants outside years 0001
 * to 9999 once the offset is applied (0001-01-01T00:00:00+01:00 is in year 0). The one RFC 3339
 * check of every service.
 */
export function isRfc3339Instant(text: string, options: { spaceSeparator?: boolean } = {}): boolean {
  const match = INSTANT.exec(text);
  if (!match || (match[4] === ' ' && options.spaceSeparator === false)) return false;
  const [year, month, day, , hour, minute, second, offsetHours = 0, offsetMinutes = 0] = match.slice(1).map((field) => (field === undefined ? undefined : Number(field))) as number[];
  if (!(isCalendarDate(year!, month!, day!) && hour! <= 23 && minute! <= 59 && second! <= 59 && offsetHours <= 23 && offsetMinutes <= 59)) return false;
  const millis = epochMillis(text);
  return millis >= EARLIEST_MS && millis <= LATEST_MS;
}

/** RFC 3339 `full-date`, e.g. 2027-02-18, of years 0001 to 9999 (as isRfc3339Instant). */
export function isRfc3339Date(text: string): boolean {
  const match = FULL_DATE.exec(text);
  return match !== null && Number(match[1]) >= 1 && isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** Milliseconds since the epoch of a checked RFC 3339 date-time (fraction digits past the millisecond dropped). */
export function epochMillis(text: string): number {
  return Date.parse(text.toUpperCase().replace(' ', 'T'));
}

export function parseInstant(text: string): Date {
  if (!isRfc3339Instant(text)) throw new TypeError(`not an RFC 3339 date-time: ${text}`);
  return new Date(epochMillis(text));
}

export interface Interval {
  start?: Date;
  end?: Date;
}

/** `start/end`, where an open end is empty or `..` (ISO 8601-2 style). */
export function parseInterval(text: string): Interval {
  const parts = text.split('/');
  if (parts.length !== 2) throw new TypeError(`not an interval start/end: ${text}`);
  const [start, end] = parts.map((part) => (part === '' || part === '..' ? undefined : parseInstant(part)));
  if (!start && !end) throw new TypeError('an interval needs at least one end');
  if (start && end && start > end) throw new TypeError('the interval ends before it starts');
  return { ...(start ? { start } : {}), ...(end ? { end } : {}) };
}

export function isRfc3339Interval(text: string): boolean {
  try {
    parseInterval(text);
    return true;
  } catch {
    return false;
  }
}
