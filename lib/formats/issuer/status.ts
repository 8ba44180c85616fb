/**
 * Passport status and the one transition table (rule I6: status changes only through events, and
 * only along this table).
 *
 * - draft: created, not yet placed on the market; the log may already record production.
 * - active: the passport is in force.
 * - suspended: temporarily not in force (recall, investigation); can be reinstated.
 * - end_of_life: the product's life has ended (recycled, destroyed, lost). Terminal for status, but
 *   traceability events are still accepted, because recycling and dismantling records are exactly
 *   what a passport must keep after end of life.
 * - revoked: the passport itself is void (issued in error, fraudulent). Terminal; nothing more is
 *   appended.
 */
import { IssuerError } from './errors.js';
import { EVENT_TYPES, LIFECYCLE_EVENT_TYPES, TRACEABILITY_EVENT_TYPES, isEventType, type EventType } from './catalogue.js';

export const PASSPORT_STATUSES = ['draft', 'active', 'suspended', 'end_of_life', 'revoked'] as const;
export type PassportStatus = (typeof PASSPORT_STATUSES)[number];

export const INITIAL_STATUS: PassportStatus = 'draft';
export const TERMINAL_STATUSES: readonly PassportStatus[] = ['end_of_life', 'revoked'];
/**
 * The statuses of a live passport: an identity has at most one passport in them (DESIGN §3), and a
 * successor may be issued only once its predecessor has left them. The issuer's partial unique index
 * (prisma/issuer, passport_live_identity_key) names the same three.
 */
export const LIVE_STATUSES: readonly PassportStatus[] = PASSPORT_STATUSES.filter((status) => !TERMINAL_STATUSES.includes(status));

/** Statuses in which traceability events may be appended; they never change the status. */
const TRACEABLE_IN: readonly PassportStatus[] = ['draft', 'active', 'suspended', 'end_of_life'];

const LIFECYCLE_RULES: Record<(typeof LIFECYCLE_EVENT_TYPES)[number], { from: readonly PassportStatus[]; to: PassportStatus }> = {
  activated: { from: ['draft'], to: 'active' },
  suspended: { from: ['active'], to: 'suspended' },
  reinstated: { from: ['suspended'], to: 'active' },
  end_of_life: { from: ['active', 'suspended'], to: 'end_of_life' },
  revoked: { from: ['draft', 'active', 'suspended'], to: 'revoked' },
};

/**
 * The transition table: for each event type, the status it leads to from each status where it is
 * allowed. A missing cell is an illegal transition.
 */
export const TRANSITIONS: Readonly<Record<EventType, Readonly<Partial<Record<PassportStatus, PassportStatus>>>>> = Object.freeze(
  Object.fromEntries([
    ...LIFECYCLE_EVENT_TYPES.map((type) => {
      const rule = LIFECYCLE_RULES[type];
      return [type, Object.freeze(Object.fromEntries(rule.from.map((from) => [from, rule.to])))];
    }),
    ...TRACEABILITY_EVENT_TYPES.map((type) => [type, Object.freeze(Object.fromEntries(TRACEABLE_IN.map((status) => [status, status])))]),
  ]) as Record<EventType, Partial<Record<PassportStatus, PassportStatus>>>,
);

/**
 * The status after `event`. Throws ILLEGAL_TRANSITION (rule I6) when the table has no such cell,
 * UNKNOWN_EVENT_TYPE when the event is not in the catalogue.
 */
export function applyEvent(status: PassportStatus, event: string): PassportStatus {
  if (!isEventType(event)) throw new IssuerError('UNKNOWN_EVENT_TYPE', `unknown event type "${event}"`, { event });
  const next = TRANSITIONS[event][status];
  if (next === undefined) {
    throw new IssuerError('ILLEGAL_TRANSITION', `event "${event}" is not allowed while the passport is ${status}`, {
      rule: 'I6',
      from: status,
      event,
    });
  }
  return next;
}

export function isPassportStatus(value: unknown): value is PassportStatus {
  return typeof value === 'string' && (PASSPORT_STATUSES as readonly string[]).includes(value);
}

/** The table as Markdown, one row per event type, one column per current status. */
export function transitionTableMarkdown(): string {
  const header = `| event \\ status | ${PASSPORT_STATUSES.join(' | ')} |`;
  const rule = `|---|${PASSPORT_STATUSES.map(() => '---').join('|')}|`;
  const rows = EVENT_TYPES.map((type) => {
    const cells = PASSPORT_STATUSES.map((status) => {
      const next = TRANSITIONS[type][status];
      return next === undefined ? '—' : next === status ? `(${next})` : `→ ${next}`;
    });
    return `| ${type} | ${cells.join(' | ')} |`;
  });
  return [header, rule, ...rows, '', '`→ x`: the status becomes x; `(x)`: allowed, status unchanged; `—`: rejected (409, rule I6).'].join('\n');
}
