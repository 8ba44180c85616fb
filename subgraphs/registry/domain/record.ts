import { RegistryError } from './errors.js';
import { checkRecordId } from './identifiers.js';
import type { RecordKind } from './kinds.js';
import { checkRecordBody, windowOfBody, type JsonObject } from './record-body.js';
import { RECORD_STATUSES, type RecordStatus } from '../../../lib/formats/registry/records.js';
import { INSTANT_EXPECTED } from '../../../lib/time.js';
import { normalizeInstant } from './time.js';

export { RECORD_STATUSES, type RecordStatus } from '../../../lib/formats/registry/records.js';

/**
 * Which status a new version may take after the latest version's status. A draft may only be
 * followed by drafts until the record comes into force, so the latest version is always the
 * current one; a withdrawn record stays withdrawn, as other registers' references to its
 * identifier must keep meaning what they meant.
 */
export const STATUS_SUCCESSORS: Readonly<Record<RecordStatus, readonly RecordStatus[]>> = {
  draft: ['draft', 'active', 'withdrawn'],
  active: ['active', 'deprecated', 'withdrawn'],
  deprecated: ['deprecated', 'active', 'withdrawn'],
  withdrawn: [],
};

/** Statuses in which a version is in force (applies, can be referenced by new passports). */
export const IN_FORCE_STATUSES: ReadonlySet<RecordStatus> = new Set<RecordStatus>(['active', 'deprecated']);

export function isRecordStatus(value: unknown): value is RecordStatus {
  return typeof value === 'string' && (RECORD_STATUSES as readonly string[]).includes(value);
}

/**
 * One version of a registry record. A record is identified by (kind, id); its versions count from
 * 1 and each supersedes the one before. Nothing is overwritten: a change is a new version.
 * Times are RFC 3339 UTC with milliseconds, so they compare as strings.
 */
export interface RecordVersion {
  readonly id: string;
  readonly kind: RecordKind;
  readonly version: number;
  readonly status: RecordStatus;
  readonly body: JsonObject;
  /** Start of the version's effective window (inclusive); null for "since always". */
  readonly effectiveFrom: string | null;
  /** End of the version's effective window (exclusive); null for open-ended. */
  readonly effectiveTo: string | null;
  readonly createdAt: string;
  /** The version this one supersedes (its predecessor); null for version 1. */
  readonly supersedes: number | null;
}

/**
 * Optimistic concurrency: the caller states the version it builds on (0 to create the record).
 * Returns the new version number, or throws STALE_VERSION when another write came first.
 */
export function nextVersion(current: number, expectedVersion: unknown): number {
  if (typeof expectedVersion !== 'number' || !Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new RegistryError('INVALID_VERSION', `expected_version must be a non-negative integer (0 creates the record); got ${JSON.stringify(expectedVersion)}`);
  }
  if (expectedVersion !== current) {
    throw new RegistryError(
      'STALE_VERSION',
      current === 0 ? `the record does not exist yet; build on version 0 to create it, not ${expectedVersion}` : `the record is at version ${current}; the request built on version ${expectedVersion}`,
    );
  }
  return current + 1;
}

/** A request to add a version, as the API receives it. */
export interface NewVersionRequest {
  /** The version the caller builds on: the latest version, or 0 to create the record. */
  readonly expectedVersion: unknown;
  readonly body: unknown;
  /** Defaults to the latest version's status, or `active` for a new record. */
  readonly status?: unknown;
  /** For a profile manifest, defaults to the manifest's own window (and must equal it if given). */
  readonly effectiveFrom?: string | null;
  readonly effectiveTo?: string | null;
}

/** The latest version of one record's history; undefined for an empty history. */
export function latestVersion(history: readonly RecordVersion[]): RecordVersion | undefined {
  return history.reduce<RecordVersion | undefined>((latest, v) => (latest === undefined || v.version > latest.version ? v : latest), undefined);
}

/** The latest version of every record among `versions`, in (kind, id) order. */
export function latestVersions(versions: readonly RecordVersion[]): RecordVersion[] {
  const latest = new Map<string, RecordVersion>();
  for (const v of versions) {
    const key = `${v.kind}\u0000${v.id}`;
    const seen = latest.get(key);
    if (!seen || v.version > seen.version) latest.set(key, v);
  }
  return [...latest.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
}

function instantOrNull(value: string | null | undefined, name: string): string | null {
  if (value === undefined || value === null) return null;
  const instant = normalizeInstant(value);
  if (instant === undefined) throw new RegistryError('INVALID_RECORD', `${name} must be ${INSTANT_EXPECTED}; got ${JSON.stringify(value)}`);
  return instant;
}

/**
 * Builds the next version of the record (kind, id) from its stored history and a request, applying
 * every rule: identifier (for a new record), optimistic concurrency, status succession, body
 * (a JSON object; models must compile and their examples validate; profile manifests must
 * validate) and the effective window. Returns the version to store; the store's unique
 * (kind, id, version) key turns a concurrent duplicate into STALE_VERSION as well.
 */
export function appendVersion(kind: RecordKind, id: string, history: readonly RecordVersion[], request: NewVersionRequest, now: Date): RecordVersion {
  if (history.some((v) => v.kind !== kind || v.id !== id)) {
    throw new Error(`history passed for ${kind}/${id} holds versions of another record`);
  }
  if (history.length === 0) checkRecordId(id, kind);
  const latest = latestVersion(history);
  const version = nextVersion(latest?.version ?? 0, request.expectedVersion);

  const status = request.status ?? latest?.status ?? 'active';
  if (!isRecordStatus(status)) {
    throw new RegistryError('INVALID_RECORD', `status must be one of ${RECORD_STATUSES.join(', ')}; got ${JSON.stringify(status)}`);
  }
  if (latest && !STATUS_SUCCESSORS[latest.status].includes(status)) {
    throw new RegistryError(
      'ILLEGAL_STATUS_TRANSITION',
      latest.status === 'withdrawn'
        ? `${kind} ${id} is withdrawn and takes no further versions`
        : `a ${status} version cannot follow a ${latest.status} one (allowed: ${STATUS_SUCCESSORS[latest.status].join(', ')})`,
    );
  }

  const body = checkRecordBody(kind, id, request.body);
  const declared = windowOfBody(kind, body);
  const effectiveFrom = instantOrNull(request.effectiveFrom === undefined ? declared?.effectiveFrom : request.effectiveFrom, 'effective_from');
  const effectiveTo = instantOrNull(request.effectiveTo === undefined ? declared?.effectiveTo : request.effectiveTo, 'effective_to');
  if (declared && (declared.effectiveFrom !== effectiveFrom || declared.effectiveTo !== effectiveTo)) {
    throw new RegistryError('INVALID_RECORD', "the effective window must equal the profile manifest's effective_from and effective_to");
  }
  if (effectiveFrom !== null && effectiveTo !== null && effectiveFrom >= effectiveTo) {
    throw new RegistryError('INVALID_RECORD', `effective_to (${effectiveTo}) must be later than effective_from (${effectiveFrom})`);
  }

  return {
    id,
    kind,
    version,
    status,
    body,
    effectiveFrom,
    effectiveTo,
    createdAt: now.toISOString(),
    supersedes: latest?.version ?? null,
  };
}
