/**
 * The cursor of a passport's event: its sequence number in the log, in decimal. A subscription or
 * an event stream resumed `after` a cursor (GraphQL `after:`, SSE `Last-Event-ID`) starts at the next
 * event of the log, which is append-only, so the events after a cursor never change.
 */

/** The largest sequence number PostgreSQL's `integer` holds. */
const MAX_SEQ = 2 ** 31 - 1;

export const eventCursor = (seq: number): string => String(seq);

/** The sequence number a cursor names, or undefined when the text is not a cursor. */
export function eventCursorSeq(cursor: string): number | undefined {
  if (!/^(0|[1-9]\d{0,9})$/.test(cursor)) return undefined;
  const seq = Number(cursor);
  return seq <= MAX_SEQ ? seq : undefined;
}
