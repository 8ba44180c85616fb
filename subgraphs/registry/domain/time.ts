/** RFC 3339 instants, the one time format of the registry's API. */
import { epochMillis, isRfc3339Date, isRfc3339Instant } from '../../../lib/time.js';

/**
 * Parses an RFC 3339 `date-time` (or, with `allowFullDate`, a `full-date`, read as 00:00 UTC that
 * day) and returns it normalised to UTC with millisecond precision, so instants compare as strings.
 * Undefined when the text is not such a value.
 */
export function normalizeInstant(text: string, allowFullDate = false): string | undefined {
  if (allowFullDate && isRfc3339Date(text)) return `${text}T00:00:00.000Z`;
  return isRfc3339Instant(text, { spaceSeparator: false }) ? new Date(epochMillis(text)).toISOString() : undefined;
}
