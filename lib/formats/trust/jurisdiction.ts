/**
 * Jurisdictions are ISO 3166-1 alpha-2 codes (with the reserved `EU`) or ISO 3166-2 subdivision
 * codes such as `DE-BY`, upper case. Input is accepted in any case and stored upper case so that
 * `/trust-lists/de` and `/trust-lists/DE` name the same list.
 */
const JURISDICTION = /^[A-Za-z]{2}(-[A-Za-z0-9]{1,3})?$/;

export function normalizeJurisdiction(input: unknown): string | undefined {
  // Tested before upper-casing: Unicode case mapping would let e.g. a dotless ı through as I.
  return typeof input === 'string' && JURISDICTION.test(input) ? input.toUpperCase() : undefined;
}
