/**
 * What a model or profile applies to: product categories and jurisdictions.
 *
 * Product categories are dotted paths from broad to narrow (`battery`, `battery.ev`); a declared
 * category covers itself and everything beneath it. Jurisdictions are ISO 3166-1 alpha-2 country
 * codes or `EU`, which covers the Union's member states, as EU product rules apply in each of them.
 */

export const PRODUCT_CATEGORY_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*(?:\\.[a-z0-9]+(?:-[a-z0-9]+)*)*$';
export const JURISDICTION_PATTERN = '^(?:EU|[A-Z]{2})$';

const CATEGORY = new RegExp(PRODUCT_CATEGORY_PATTERN);
const JURISDICTION = new RegExp(JURISDICTION_PATTERN);

/** ISO 3166-1 alpha-2 codes of the 27 EU member states (Greece is GR, not the EU's own EL). */
export const EU_MEMBER_STATES: readonly string[] = Object.freeze([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
]);

const MEMBER_STATES = new Set(EU_MEMBER_STATES);

export function isProductCategory(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 128 && CATEGORY.test(value);
}

export function isJurisdiction(value: unknown): value is string {
  return typeof value === 'string' && JURISDICTION.test(value);
}

/** Whether a declared category covers a queried one: the same, or an ancestor in the dotted path. */
export function categoryCovers(declared: string, queried: string): boolean {
  return queried === declared || queried.startsWith(`${declared}.`);
}

/** Whether a declared jurisdiction covers a queried one: the same, or `EU` for a member state. */
export function jurisdictionCovers(declared: string, queried: string): boolean {
  return declared === queried || (declared === 'EU' && MEMBER_STATES.has(queried));
}

/** The product categories and jurisdictions one record version declares. */
export interface Scope {
  readonly productCategories: readonly string[];
  readonly jurisdictions: readonly string[];
}

export function scopeCovers(scope: Scope, productCategory?: string, jurisdiction?: string): boolean {
  return (
    (productCategory === undefined || scope.productCategories.some((declared) => categoryCovers(declared, productCategory))) &&
    (jurisdiction === undefined || scope.jurisdictions.some((declared) => jurisdictionCovers(declared, jurisdiction)))
  );
}
