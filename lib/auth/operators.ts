/**
 * Operators (docs/OPERATORS.md): the economic operators one platform serves, each writing and
 * signing only its own passports. What a caller acts as: its operator, or, for the platform admin
 * (operator null), the default operator, which holds what the platform held before operators.
 */
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
