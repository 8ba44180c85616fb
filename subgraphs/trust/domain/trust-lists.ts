/**
 * Trust lists per jurisdiction, after ETSI TS 119 612 (trusted lists) and TS 119 602 (lists of
 * trusted entities).
 *
 * Storage is append-only: a list is the series of changes recorded for it, each with the sequence
 * number it produced (1 for the registration, +1 for every later change, as TSLSequenceNumber)
 * and its recording instant, which is the issue time of the list version it produced. A change
 * carries the whole new state of what it touched, so any version is a fold over its prefix:
 * `trustListAt(history, at)` is exactly what the list said at `at`, the version with the highest
 * sequence number recorded by then.
 *
 * Entries have an id, a service type (an absolute URI such as
 * http://uri.etsi.org/TrstSvc/Svctype/CA/QC), an optional name and graph node, a status
 * (`granted` | `withdrawn`) with its starting time, and the history of earlier status
 * instances, newest first (ServiceHistory).
 * - Upserting a new entry grants it from the recording instant.
 * - Upserting with `superseded_at` withdraws it from that instant, which may lie in the past
 *   (the versions recorded before keep saying "granted": that is what the list said then) but
 *   not in the future, nor before the entry's current status began: a list version never states
 *   a status that is not yet in force, so a sequence number always means one content.
 * - Upserting a withdrawn entry without `superseded_at` grants it again from the recording instant.
 * - Restating an entry unchanged records nothing and keeps the sequence number.
 * Next update: the registration sets `next_update` (default: 180 days after issue, in whole seconds,
 * within the six months TS 119 612 allows); every later version keeps the same distance from its
 * issue time. It is written with only the fraction digits it needs: a time given in whole seconds
 * comes back as given.
 * Recording instants never decrease: if the clock steps back, a change is recorded at the
 * previous change's instant.
 */
import { failure, success, type TrustResult } from '../../../lib/formats/trust/errors.js';
import { normalizeJurisdiction } from '../../../lib/formats/trust/jurisdiction.js';
import { isNodeId } from '../../../lib/formats/trust/nodes.js';
import { INSTANT_EXPECTED } from '../../../lib/time.js';
import { formatInstant, formatInstantShortest, parseInstant, wholeSecond, type Instant } from '../../../lib/formats/trust/time.js';

export type EntryStatus = 'granted' | 'withdrawn';

/** One status instance of an entry: its service information and status from a starting time. */
export interface EntryStatusInstance {
  readonly service_type: string;
  readonly name?: string;
  readonly node_id?: string;
  readonly status: EntryStatus;
  readonly status_starting_time: string;
}

export interface TrustListEntry extends EntryStatusInstance {
  readonly id: string;
  /** Earlier instances, newest first. */
  readonly history: readonly EntryStatusInstance[];
}

interface ChangeBase {
  readonly sequence_number: number;
  readonly recorded_at: string;
  readonly next_update: string;
}

export type TrustListChange =
  | (ChangeBase & { readonly change: 'registration'; readonly jurisdiction: string; readonly framework: string })
  | (ChangeBase & { readonly change: 'entry'; readonly entry: TrustListEntry });

/** A list version: what the list said. */
export interface TrustList {
  readonly jurisdiction: string;
  readonly framework: string;
  readonly sequence_number: number;
  readonly issued_at: string;
  readonly next_update: string;
  readonly entries: readonly TrustListEntry[];
}

const DEFAULT_UPDATE_PERIOD = 180 * 24 * 3600 * 1_000_000;
const TEXT = /^[^\p{Cc}]{1,256}$/u;
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s\p{Cc}]{1,1024}$/u;

/** What the list said at `at` (the latest version when `at` is undefined); undefined before registration. */
export function trustListAt(history: readonly TrustListChange[], at?: Instant): TrustList | undefined {
  const versions = history.filter((change) => at === undefined || parseInstant(change.recorded_at)! <= at).sort((a, b) => a.sequence_number - b.sequence_number);
  const registration = versions.find((change) => change.change === 'registration');
  if (registration?.change !== 'registration') return undefined;
  const entries = new Map<string, TrustListEntry>();
  for (const change of versions) {
    if (change.change === 'entry') entries.set(change.entry.id, change.entry);
  }
  const latest = versions[versions.length - 1]!;
  return {
    jurisdiction: registration.jurisdiction,
    framework: registration.framework,
    sequence_number: latest.sequence_number,
    issued_at: latest.recorded_at,
    next_update: latest.next_update,
    entries: [...entries.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
}

/** The first change of a list. */
export function registerTrustList(history: readonly TrustListChange[], input: unknown, now: Instant): TrustResult<TrustListChange> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_TRUST_LIST', 'a trust list must be a JSON object');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => !['jurisdiction', 'framework', 'next_update'].includes(member));
  if (unknown) return failure('INVALID_TRUST_LIST', `unexpected trust list member "${unknown}"`);
  const jurisdiction = normalizeJurisdiction(body.jurisdiction);
  if (!jurisdiction) return failure('INVALID_TRUST_LIST', 'jurisdiction must be an ISO 3166-1 alpha-2 or ISO 3166-2 code');
  if (typeof body.framework !== 'string' || !TEXT.test(body.framework)) return failure('INVALID_TRUST_LIST', 'framework must be a name of 1 to 256 characters');
  if (history.length > 0) return failure('TRUST_LIST_EXISTS', `the trust list of ${jurisdiction} is already registered`);
  const nextUpdate = body.next_update === undefined ? wholeSecond(now + DEFAULT_UPDATE_PERIOD) : parseInstant(body.next_update);
  if (nextUpdate === undefined) return failure('INVALID_TRUST_LIST', `next_update must be ${INSTANT_EXPECTED}`);
  if (nextUpdate <= now) return failure('INVALID_TRUST_LIST', 'next_update must be after now');
  return success({
    change: 'registration',
    sequence_number: 1,
    recorded_at: formatInstant(now),
    next_update: formatInstantShortest(nextUpdate),
    jurisdiction,
    framework: body.framework,
  });
}

export interface EntryUpsert {
  /** The change recorded, or undefined when the upsert restated the entry unchanged. */
  readonly change: TrustListChange | undefined;
  readonly list: TrustList;
  /** True when the upsert added an entry the list did not hold. */
  readonly created: boolean;
}

const ENTRY_MEMBERS = new Set(['id', 'service_type', 'name', 'node_id', 'superseded_at']);

/** Records an upsert of one entry; see the rules at the top of this file. */
export function upsertTrustListEntry(history: readonly TrustListChange[], input: unknown, now: Instant): TrustResult<EntryUpsert> {
  const current = trustListAt(history);
  if (!current) return failure('UNKNOWN_TRUST_LIST', 'no trust list is registered for this jurisdiction');
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return failure('INVALID_ENTRY', 'an entry must be a JSON object');
  const body = input as Record<string, unknown>;
  const unknown = Object.keys(body).find((member) => !ENTRY_MEMBERS.has(member));
  if (unknown) return failure('INVALID_ENTRY', `unexpected entry member "${unknown}"`);
  if (typeof body.id !== 'string' || !TEXT.test(body.id)) return failure('INVALID_ENTRY', 'id must be 1 to 256 characters');
  if (body.service_type !== undefined && (typeof body.service_type !== 'string' || !ABSOLUTE_URI.test(body.service_type))) {
    return failure('INVALID_ENTRY', 'service_type must be an absolute URI');
  }
  if (body.name !== undefined && (typeof body.name !== 'string' || !TEXT.test(body.name))) return failure('INVALID_ENTRY', 'name must be 1 to 256 characters');
  if (body.node_id !== undefined && !isNodeId(body.node_id)) return failure('INVALID_ENTRY', 'node_id must be a node id');

  const recorded = Math.max(now, parseInstant(current.issued_at)!);
  const existing = current.entries.find((entry) => entry.id === body.id);
  const service = {
    service_type: (body.service_type as string | undefined) ?? existing?.service_type,
    name: (body.name as string | undefined) ?? existing?.name,
    node_id: (body.node_id as string | undefined) ?? existing?.node_id,
  };

  let status: EntryStatus = 'granted';
  let startingTime = existing?.status === 'granted' ? parseInstant(existing.status_starting_time)! : recorded;
  if (body.superseded_at !== undefined) {
    const supersededAt = parseInstant(body.superseded_at);
    if (supersededAt === undefined) return failure('INVALID_ENTRY', `superseded_at must be ${INSTANT_EXPECTED}`);
    if (!existing) return failure('UNKNOWN_ENTRY', `the list holds no entry ${body.id} to withdraw`);
    if (supersededAt > recorded) return failure('INVALID_ENTRY', `superseded_at lies after ${formatInstant(recorded)}; a withdrawal is recorded once it takes effect`);
    const since = parseInstant(existing.status_starting_time)!;
    if (existing.status === 'withdrawn' && supersededAt !== since) {
      return failure('ENTRY_CONFLICT', `entry ${existing.id} is already withdrawn since ${existing.status_starting_time}`);
    }
    if (supersededAt < since) return failure('INVALID_ENTRY', `superseded_at lies before the entry's current status began (${existing.status_starting_time})`);
    status = 'withdrawn';
    startingTime = supersededAt;
  }

  if (service.service_type === undefined) return failure('INVALID_ENTRY', `entry ${body.id} is new and needs a service_type`);
  const instance: EntryStatusInstance = {
    service_type: service.service_type,
    ...(service.name !== undefined && { name: service.name }),
    ...(service.node_id !== undefined && { node_id: service.node_id }),
    status,
    status_starting_time: formatInstant(startingTime),
  };
  if (existing && sameInstance(existing, instance)) return success({ change: undefined, list: current, created: false });
  const { id: _id, history: _history, ...previous } = existing ?? { id: '', history: [] };
  const entry: TrustListEntry = {
    id: body.id,
    ...instance,
    history: existing ? [previous as EntryStatusInstance, ...existing.history] : [],
  };
  const lastIssued = parseInstant(current.issued_at)!;
  const period = parseInstant(current.next_update)! - lastIssued;
  const change: TrustListChange = {
    change: 'entry',
    sequence_number: current.sequence_number + 1,
    recorded_at: formatInstant(recorded),
    next_update: formatInstantShortest(recorded + period),
    entry,
  };
  return success({ change, list: trustListAt([...history, change])!, created: !existing });
}

function sameInstance(a: EntryStatusInstance, b: EntryStatusInstance): boolean {
  return a.service_type === b.service_type && a.name === b.name && a.node_id === b.node_id && a.status === b.status && a.status_starting_time === b.status_starting_time;
}
