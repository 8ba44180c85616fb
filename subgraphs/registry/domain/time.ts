/** RFC 3339 instants, the one time format of the registry's API. */

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const FULL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function validDate(year: string, month: string, day: string): boolean {
  const m = Number(month);
  const d = Number(day);
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(Number(year), m);
}

/**
 * Parses an RFC 3339 `date-time` (or, with `allowFullDate`, a `full-date`, read as 00:00 UTC that
 * day) and returns it normalised to UTC with millisecond precision, so instants compare as strings.
 * Undefined when the text is not such a value; leap seconds are refused, as JavaScript time
 * cannot represent them.
 */
export function normalizeInstant(text: string, allowFullDate = false): string | undefined {
  const dateOnly = allowFullDate ? FULL_DATE.exec(text) : null;
  if (dateOnly) {
    return validDate(dateOnly[1], dateOnly[2], dateOnly[3]) ? `${text}T00:00:00.000Z` : undefined;
  }
  const match = DATE_TIME.exec(text);
  if (!match || !validDate(match[1], match[2], match[3])) return undefined;
  if (Number(match[4]) > 23 || Number(match[5]) > 59 || Number(match[6]) > 59) return undefined;
  const offset = match[8];
  if (offset.length === 6 && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return undefined;
  const millis = Date.parse(text.toUpperCase());
  return Number.isNaN(millis) ? undefined : new Date(millis).toISOString();
}
