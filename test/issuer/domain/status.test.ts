import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../lib/formats/issuer/catalogue.js';
import { IssuerError } from '../../../lib/formats/issuer/errors.js';
import { applyEvent, PASSPORT_STATUSES, TRANSITIONS, transitionTableMarkdown } from '../../../lib/formats/issuer/status.js';

// The intended table, written out cell by cell, independently of how status.ts builds its own.
// null: the event is refused in that status (409, rule I6).
const STATUSES = ['draft', 'active', 'suspended', 'end_of_life', 'revoked'] as const;
const _ = null;
const EXPECTED: Record<string, readonly (string | null)[]> = {
  //                       draft        active         suspended      end_of_life    revoked
  activated: /*        */ ['active', _, _, _, _],
  suspended: /*        */ [_, 'suspended', _, _, _],
  reinstated: /*       */ [_, _, 'active', _, _],
  end_of_life: /*      */ [_, 'end_of_life', 'end_of_life', _, _],
  revoked: /*          */ ['revoked', 'revoked', 'revoked', _, _],
  ObjectEvent: /*      */ ['draft', 'active', 'suspended', 'end_of_life', _],
  AggregationEvent: /* */ ['draft', 'active', 'suspended', 'end_of_life', _],
  TransactionEvent: /* */ ['draft', 'active', 'suspended', 'end_of_life', _],
  TransformationEvent: ['draft', 'active', 'suspended', 'end_of_life', _],
};

describe('passport status transitions (rule I6)', () => {
  it('has exactly the statuses and event types the expectation covers', () => {
    expect([...PASSPORT_STATUSES]).toEqual([...STATUSES]);
    expect([...EVENT_TYPES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  const cells = Object.entries(EXPECTED).flatMap(([event, row]) => STATUSES.map((from, i) => ({ event, from, to: row[i]! })));
  it('covers all 45 cells', () => expect(cells).toHaveLength(45));

  for (const { event, from, to } of cells) {
    if (to !== null) {
      it(`${event} in ${from} leads to ${to}`, () => {
        expect(applyEvent(from, event)).toBe(to);
        expect(TRANSITIONS[event as keyof typeof TRANSITIONS][from]).toBe(to);
      });
    } else {
      it(`${event} in ${from} is refused`, () => {
        let thrown: unknown;
        try {
          applyEvent(from, event);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(IssuerError);
        expect((thrown as IssuerError).toJSON()).toMatchObject({ code: 'ILLEGAL_TRANSITION', rule: 'I6', from, event });
        expect(TRANSITIONS[event as keyof typeof TRANSITIONS][from]).toBeUndefined();
      });
    }
  }

  it('refuses event types outside the catalogue with their own code', () => {
    expect(() => applyEvent('active', 'teleported')).toThrowError(expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE' }));
  });

  it('prints the table with one row per event type and one column per status', () => {
    const lines = transitionTableMarkdown().split('\n');
    expect(lines[0]).toBe('| event \\ status | draft | active | suspended | end_of_life | revoked |');
    expect(lines).toContain('| end_of_life | — | → end_of_life | → end_of_life | — | — |');
    expect(lines).toContain('| ObjectEvent | (draft) | (active) | (suspended) | (end_of_life) | — |');
    expect(lines.filter((line) => line.startsWith('| ') && !line.startsWith('| event'))).toHaveLength(9);
  });
});
