/**
 * A change notice's payload (lib/db/change-feed.ts) carries the appending request's traceparent when
 * there is one; a payload written before notices carried it (four fields) still reads, and a fifth
 * field that is not a traceparent is not taken for one.
 */
import { describe, expect, it } from 'vitest';
import { changePayload, parseChangePayload } from '../../lib/db/change-feed.js';

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('a change notice payload', () => {
  it('carries the trace, and reads back', () => {
    const notice = { feed: 'passport-events', key: 'p-1', cursor: '7', at: 1_796_568_437_452, trace: TRACE };
    expect(changePayload(notice)).toBe(`passport-events p-1 7 1796568437452 ${TRACE}`);
    expect(parseChangePayload(changePayload(notice))).toEqual(notice);
  });

  it('reads a payload without a trace, as written before notices carried one', () => {
    expect(parseChangePayload('passport-status default 12 1796568437452')).toEqual({ feed: 'passport-status', key: 'default', cursor: '12', at: 1_796_568_437_452 });
    expect(changePayload({ feed: 'passport-status', key: 'default', cursor: '12', at: 1 })).toBe('passport-status default 12 1');
  });

  it('refuses a fifth field that is not a traceparent, and a sixth', () => {
    expect(parseChangePayload('passport-events p-1 7 1 not-a-trace')).toBeUndefined();
    expect(parseChangePayload(`passport-events p-1 7 1 ${TRACE} more`)).toBeUndefined();
  });
});
