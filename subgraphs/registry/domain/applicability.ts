import { RegistryError } from './errors.js';
import { formatRecordRef } from './identifiers.js';
import { IN_FORCE_STATUSES, type RecordStatus, type RecordVersion } from './record.js';
import { scopeOfBody } from './record-body.js';
import { isJurisdiction, isProductCategory, scopeCovers } from './scope.js';
import { INSTANT_EXPECTED } from '../../../lib/time.js';
import { normalizeInstant } from './time.js';

/** Which product category, jurisdiction and instant to answer for; an absent filter matches all. */
export interface ApplicabilityQuery {
  readonly productCategory?: string;
  readonly jurisdiction?: string;
  /** RFC 3339 UTC instant, normalised (see normalizeInstant). */
  readonly at: string;
}

/** One model or profile version that applies. */
export interface Applicable {
  readonly kind: 'model' | 'profile';
  readonly id: string;
  readonly version: number;
  /** `id@version`, the form a passport's type ref takes. */
  readonly ref: string;
  readonly status: RecordStatus;
  readonly productCategories: readonly string[];
  readonly jurisdictions: readonly string[];
  readonly effectiveFrom: string | null;
  readonly effectiveTo: string | null;
  /** For a profile: the model version its passports conform to. */
  readonly model?: string;
}

const QUERY_PARAMETERS = new Set(['product_category', 'jurisdiction', 'at']);

/**
 * Reads the query parameters of `GET /applicability` (snake_case, as the REST API names them):
 * `product_category`, `jurisdiction` (ISO 3166-1 alpha-2 or EU, any case) and `at` (RFC 3339
 * date-time or full-date; defaults to `now`). Unknown or malformed parameters are INVALID_QUERY.
 */
export function parseApplicabilityQuery(params: Readonly<Record<string, unknown>>, now: Date): ApplicabilityQuery {
  for (const name of Object.keys(params)) {
    if (!QUERY_PARAMETERS.has(name)) throw new RegistryError('INVALID_QUERY', `unknown applicability parameter "${name}"`);
  }
  const { product_category: category, jurisdiction, at } = params;
  if (category !== undefined && !isProductCategory(category)) {
    throw new RegistryError('INVALID_QUERY', `product_category is a dotted lower-case path such as battery.ev; got ${JSON.stringify(category)}`);
  }
  const region = typeof jurisdiction === 'string' ? jurisdiction.toUpperCase() : jurisdiction;
  if (region !== undefined && !isJurisdiction(region)) {
    throw new RegistryError('INVALID_QUERY', `jurisdiction is an ISO 3166-1 alpha-2 code or EU; got ${JSON.stringify(jurisdiction)}`);
  }
  const instant = at === undefined ? now.toISOString() : typeof at === 'string' ? normalizeInstant(at, true) : undefined;
  if (instant === undefined) throw new RegistryError('INVALID_QUERY', `at must be ${INSTANT_EXPECTED}, or a date of those years; got ${JSON.stringify(at)}`);
  return { productCategory: category, jurisdiction: region, at: instant };
}

function covers(version: RecordVersion, at: string): boolean {
  return (version.effectiveFrom === null || version.effectiveFrom <= at) && (version.effectiveTo === null || at < version.effectiveTo);
}

/**
 * The model and profile versions that apply to a product category and jurisdiction at an instant.
 *
 * For each record, the version in force at `at` is the highest-numbered non-draft version whose
 * effective window holds `at`: a later version takes over from its effective_from on without its
 * predecessor being rewritten, and a withdrawn or draft version never applies. The scope of that
 * one version then decides, so narrowing a scope in a new version is not undone by an older one.
 * Profiles are generic records whose body is a profile manifest. A version with no effective_from
 * holds since always, so a later one without a start takes over at every instant. Results are
 * models then profiles, each by id.
 */
export function applicableAt(versions: readonly RecordVersion[], query: ApplicabilityQuery): Applicable[] {
  const inForce = new Map<string, RecordVersion>();
  for (const v of versions) {
    if ((v.kind !== 'model' && v.kind !== 'generic') || v.status === 'draft' || !covers(v, query.at)) continue;
    const key = `${v.kind}\u0000${v.id}`;
    const seen = inForce.get(key);
    if (!seen || v.version > seen.version) inForce.set(key, v);
  }
  const matches: Applicable[] = [];
  for (const v of inForce.values()) {
    const scope = scopeOfBody(v.kind, v.body);
    if (!scope || !IN_FORCE_STATUSES.has(v.status) || !scopeCovers(scope, query.productCategory, query.jurisdiction)) continue;
    const kind = v.kind === 'model' ? 'model' : 'profile';
    matches.push({
      kind,
      id: v.id,
      version: v.version,
      ref: formatRecordRef(v),
      status: v.status,
      productCategories: scope.productCategories,
      jurisdictions: scope.jurisdictions,
      effectiveFrom: v.effectiveFrom,
      effectiveTo: v.effectiveTo,
      ...(kind === 'profile' && typeof v.body.model === 'string' ? { model: v.body.model } : {}),
    });
  }
  return matches.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'model' ? -1 : 1) : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
