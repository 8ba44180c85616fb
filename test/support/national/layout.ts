/**
 * What the national-scale data set looks like, shared by the builder (build.ts), its signing
 * workers (passport-signer.ts) and whoever reads the data back (the benchmark, the tests): passport
 * `n`'s id and identity are functions of `n`, so a reader draws ids without asking the database.
 */
import { createHash } from 'node:crypto';

/** Every passport's log: `activated`, then nine EPCIS ObjectEvents. */
export const EVENTS_PER_PASSPORT = 10;

/** A UUID-shaped id spread over the key space as randomUUID()'s are (index order is not load order). */
export function nationalPassportId(n: number): string {
  const hex = createHash('sha256').update(`national passport ${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A GS1 Digital Link of an item, serial NAT-<n>. */
export const nationalIdentity = (n: number) => `https://id.gs1.org/01/09520123456788/21/NAT-${n}`;

/** What every built passport shares with a passport created through the API (its model, class, claims, issuer). */
export interface PassportTemplate {
  typeRefId: string;
  typeRefVersion: number;
  /** JSON text. */
  configVector: string;
  capabilityClass: string;
  profileId: string | null;
  /** JSON text. */
  claims: string;
  /** The core document minus what differs per passport (id, identity, creation time). */
  core: Record<string, unknown>;
}

export interface SignerSetup {
  /** The services' database (no schema). */
  databaseUrl: string;
  /** The key-encryption keys the issuer's signing keys are sealed under. */
  kek: Uint8Array[];
  template: PassportTemplate;
}

/** Build passports `from` ≤ n < `to`; passport n gets status index `statusIndexBase + n`. */
export interface SignerJob {
  from: number;
  to: number;
  statusIndexBase: number;
}

export const PASSPORT_COLUMNS = [
  'id',
  'identity',
  'digital_link',
  'granularity',
  'type_ref_id',
  'type_ref_version',
  'config_vector',
  'capability_class',
  'profile_id',
  'claims',
  'status',
  'core',
  'log_size',
  'frontier',
  'last_event',
  'log_head',
  'empty_log_head',
  'latest_pack',
  'status_index',
  'latest_pack_at',
  'created_at',
  'updated_at',
  'predecessor_id',
  'live_before_rule',
  'operator',
] as const;

export const EVENT_COLUMNS = ['passport_id', 'seq', 'type', 'recorded_at', 'kid', 'canonical', 'log_head'] as const;

/** One line of COPY's text format: tab-separated, `\N` for null, backslash and control characters escaped. */
export function copyLine(values: readonly (string | null)[]): string {
  return `${values.map((value) => (value === null ? '\\N' : value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')))).join('\t')}\n`;
}
