/** RFC 3339 instants and intervals as the services take them (DESIGN §3). */

const INSTANT = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

export function isRfc3339Instant(text: string): boolean {
  return INSTANT.test(text) && !Number.isNaN(Date.parse(text));
}

export function parseInstant(text: string): Date {
  if (!isRfc3339Instant(text)) throw new TypeError(`not an RFC 3339 date-time: ${text}`);
  return new Date(text);
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
