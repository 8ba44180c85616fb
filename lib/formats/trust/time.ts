/**
 * Instants and intervals as the trust service compares them.
 *
 * An Instant is a count of microseconds since the Unix epoch (UTC): PostgreSQL's timestamptz
 * resolution, and still an exact integer in a double for any date in years 0–9999. Inputs are
 * RFC 3339 date-times (`T` or `t`, `Z` or a numeric offset, any number of fraction digits);
 * digits beyond the microsecond are truncated. Leap seconds (`:60`) are refused because no
 * clock this service compares against can produce them.
 */
import { epochMillis, isRfc3339Instant } from '../../time.js';

export type Instant = number;

/** `start/end` after ISO 8601: an open end is empty or `..`. Membership is half-open, [start, end). */
export interface Interval {
  readonly start?: Instant;
  readonly end?: Instant;
}

const MICROS_PER_MS = 1000;

export function parseInstant(text: unknown): Instant | undefined {
  if (typeof text !== 'string' || !isRfc3339Instant(text, { spaceSeparator: false })) return undefined;
  // Date.parse keeps the milliseconds; the next three fraction digits are the microseconds.
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  return epochMillis(text) * MICROS_PER_MS + Number(fraction.slice(3, 6).padEnd(3, '0'));
}

/** UTC with millisecond digits as Date#toISOString writes them, widened to six digits only when needed. */
export function formatInstant(instant: Instant): string {
  const millis = Math.floor(instant / MICROS_PER_MS);
  const micros = instant - millis * MICROS_PER_MS;
  const iso = new Date(millis).toISOString();
  return micros === 0 ? iso : `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}

/**
 * As formatInstant, but with only the fraction digits the instant needs: a schedule given in whole
 * seconds (`next_update: "2030-01-01T00:00:00Z"`) comes back as it was given.
 */
export function formatInstantShortest(instant: Instant): string {
  return formatInstant(instant).replace(/\.0+Z$/, 'Z');
}

/** The instant truncated to a whole second. */
export function wholeSecond(instant: Instant): Instant {
  return instant - (instant % 1_000_000);
}

export function instantOf(date: Date): Instant {
  return date.getTime() * MICROS_PER_MS;
}

export function instantFromUnixSeconds(seconds: number): Instant {
  return seconds * 1_000_000;
}

export function parseInterval(text: unknown): Interval | undefined {
  if (typeof text !== 'string') return undefined;
  const parts = text.split('/');
  if (parts.length !== 2) return undefined;
  const [startText, endText] = parts as [string, string];
  const open = (part: string) => part === '' || part === '..';
  const start = open(startText) ? undefined : parseInstant(startText);
  const end = open(endText) ? undefined : parseInstant(endText);
  if ((!open(startText) && start === undefined) || (!open(endText) && end === undefined)) return undefined;
  if (start !== undefined && end !== undefined && start >= end) return undefined;
  return { ...(start !== undefined && { start }), ...(end !== undefined && { end }) };
}

export function intervalContains(interval: Interval, instant: Instant): boolean {
  return (interval.start === undefined || interval.start <= instant) && (interval.end === undefined || instant < interval.end);
}
