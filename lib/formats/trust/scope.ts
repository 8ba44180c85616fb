/**
 * What a delegation credential delegates.
 *
 * A scope has three dimensions: `jurisdictions`, `event_types` and `capabilities`. A dimension
 * that is absent is unrestricted; a present one is a non-empty list of the values delegated (an
 * empty list is refused rather than read as "nothing", so that it cannot be mistaken for
 * "everything"). A scope is therefore a box: every combination of one value per dimension.
 *
 * A root holds the unrestricted scope. Any other node holds the union of the scopes of the
 * delegations it receives, each cut down to what its issuer held (see delegation.ts), so what a
 * node holds is a union of boxes. A delegation is within its issuer's scope when every
 * combination it grants lies in at least one of the issuer's boxes; two delegations
 * ({DE}×{a}, {FR}×{a}) together cover {DE, FR}×{a}, while ({DE}×{a}, {FR}×{b}) do not cover
 * {DE, FR}×{a, b}.
 */
import { normalizeJurisdiction } from './jurisdiction.js';

export const SCOPE_DIMENSIONS = ['jurisdictions', 'event_types', 'capabilities'] as const;
export type ScopeDimension = (typeof SCOPE_DIMENSIONS)[number];

export type DelegationScope = { readonly [D in ScopeDimension]?: readonly string[] };

/** One act a verifier asks about: a dimension left out is not asked about. */
export interface ScopeClaim {
  readonly jurisdiction?: string;
  readonly event_type?: string;
  readonly capability?: string;
}

export const UNRESTRICTED_SCOPE: DelegationScope = Object.freeze({});

const MAX_VALUES = 256;
const VALUE = /^[^\p{Cc}]{1,256}$/u;

/** Checks and normalizes a scope; returns a message on failure. */
export function validateScope(input: unknown): DelegationScope | string {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return 'scope must be an object';
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => !(SCOPE_DIMENSIONS as readonly string[]).includes(member));
  if (unknown) return `unexpected scope member "${unknown}"`;
  const scope: { [D in ScopeDimension]?: string[] } = {};
  for (const dimension of SCOPE_DIMENSIONS) {
    const list = body[dimension];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_VALUES) {
      return `scope.${dimension} must be a list of 1 to ${MAX_VALUES} values, or absent for no restriction`;
    }
    const values = new Set<string>();
    for (const item of list) {
      const value = dimension === 'jurisdictions' ? normalizeJurisdiction(item) : typeof item === 'string' && VALUE.test(item) ? item : undefined;
      if (value === undefined) return `scope.${dimension} holds an invalid value ${JSON.stringify(item)}`;
      values.add(value);
    }
    scope[dimension] = [...values].sort();
  }
  return scope;
}

type Axis = ReadonlySet<string> | 'ALL';
type Box = readonly Axis[];

function toBox(scope: DelegationScope): Box {
  return SCOPE_DIMENSIONS.map((dimension) => (scope[dimension] === undefined ? 'ALL' : new Set(scope[dimension])));
}

/** The combinations both scopes grant, or undefined when they share none. */
export function intersectScopes(a: DelegationScope, b: DelegationScope): DelegationScope | undefined {
  const result: { [D in ScopeDimension]?: string[] } = {};
  for (const dimension of SCOPE_DIMENSIONS) {
    const left = a[dimension];
    const right = b[dimension];
    if (left === undefined && right === undefined) continue;
    const values = left === undefined ? [...right!] : right === undefined ? [...left] : left.filter((value) => right.includes(value));
    if (values.length === 0) return undefined;
    result[dimension] = values;
  }
  return result;
}

/** Whether every combination `scope` grants lies in at least one of `held`. */
export function scopeCoveredBy(scope: DelegationScope, held: readonly DelegationScope[]): boolean {
  return covered(toBox(scope), held.map(toBox), 0);
}

// Splits the box dimension by dimension: values covered by the same set of held boxes lead to the
// same sub-question, so each distinct set is asked once. A value no held box lists stands for all
// such values when the scope is unrestricted in that dimension.
const ANY_OTHER = Symbol('any other value');

function covered(box: Box, held: readonly Box[], dimension: number): boolean {
  if (held.length === 0) return false;
  if (dimension === box.length) return true;
  const axis = box[dimension]!;
  const values: (string | typeof ANY_OTHER)[] =
    axis === 'ALL' ? [...new Set(held.flatMap((other) => (other[dimension] === 'ALL' ? [] : [...(other[dimension] as ReadonlySet<string>)]))), ANY_OTHER] : [...axis];
  const asked = new Set<string>();
  for (const value of values) {
    const covering = held.filter((other) => {
      const otherAxis = other[dimension]!;
      return otherAxis === 'ALL' || (value !== ANY_OTHER && otherAxis.has(value));
    });
    const key = covering.map((other) => held.indexOf(other)).join(',');
    if (asked.has(key)) continue;
    asked.add(key);
    if (!covered(box, covering, dimension + 1)) return false;
  }
  return true;
}

/** Whether a scope grants the act a verifier asks about. */
export function scopeAllows(scope: DelegationScope, claim: ScopeClaim): boolean {
  const asked: [ScopeDimension, string | undefined][] = [
    ['jurisdictions', claim.jurisdiction === undefined ? undefined : (normalizeJurisdiction(claim.jurisdiction) ?? claim.jurisdiction)],
    ['event_types', claim.event_type],
    ['capabilities', claim.capability],
  ];
  return asked.every(([dimension, value]) => value === undefined || scope[dimension] === undefined || scope[dimension]!.includes(value));
}
