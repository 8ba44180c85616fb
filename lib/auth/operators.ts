/**
 * Operators (docs/OPERATORS.md): the economic operators one platform serves, each writing and
 * signing only its own passports. What a caller acts as: its operator, or, for the platform admin
 * (operator null), the default operator, which holds what the platform held before operators.
 */
import { ProblemError } from '../problem.js';

/** The operator every platform has from its first migration (the identity store's): it owns everything of before operators. */
export const DEFAULT_OPERATOR = 'default';

/** An operator's id: a lowercase slug of 1 to 40 letters, digits and inner hyphens (`default`, `acme-batteries`). */
export const OPERATOR_ID = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;

export function isOperatorId(value: unknown): value is string {
  return typeof value === 'string' && OPERATOR_ID.test(value);
}

/** The operator a caller (its principal) creates passports for: its own; the platform's own callers create the default operator's. */
export function actingOperator(principal: { operator: string | null }): string {
  return principal.operator ?? DEFAULT_OPERATOR;
}

/** Does a caller acting for `actor` write what `owner` owns: its own operator's, and anything for the platform itself. */
export function writesFor(actor: { operator: string | null }, owner: string): boolean {
  return actor.operator === null || actor.operator === owner;
}

/**
 * Refuses a write to another operator's object (OWASP API1, docs/OPERATORS.md "What each role may
 * do"): 403 OWNED_BY_ANOTHER_OPERATOR, since passports, registry records and snapshots are public
 * and their existence no secret. What is not public (tokens, operators) answers 404 instead.
 */
export function refuseUnlessOwner(actor: { operator: string | null }, object: { kind: string; id: string; owner: string }): void {
  if (writesFor(actor, object.owner)) return;
  throw new ProblemError(403, 'OWNED_BY_ANOTHER_OPERATOR', `The ${object.kind} ${object.id} is the operator ${object.owner}'s: only its writers and the platform's admin write to it.`, {
    operator: object.owner,
  });
}
