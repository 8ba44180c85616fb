/**
 * The issuer's passports over the domain, the data layer and the rest of the graph: create a
 * passport, read it now or as of an instant, append an event, mint a pack, compute the verdict.
 * Domain refusals become RFC 9457 problems here (problems.ts). Credentials: credential-service.ts;
 * profiles, applicability and restores: admin-service.ts.
 */
import { LRUCache } from 'lru-cache';
import type { DomainMetrics } from '../../../lib/ops/metrics.js';
import { randomUUID } from 'node:crypto';
import DataLoader from 'dataloader';
import type { KeyStore } from '../../../lib/keys/key-store.js';
import { badRequest, notFound, ProblemError, refusing, unprocessable } from '../../../lib/problem.js';
import { INSTANT_EXPECTED, isRfc3339Instant, parseInstant } from '../../../lib/time.js';
import { LivePassportExists, type NewPassport, type PassportRepository, type PassportRow, type PassportSummaryRow, type StoredDisclosure, type StoredEventRow } from '../data/passport-repository.js';
import type { ProfileRecord, ProfileRepository } from '../data/profile-repository.js';
import type { StatusChangeRow } from '../data/status-changes.js';
import { feedCursorId } from '../../../lib/db/change-feed.js';
import {
  assembleVerdict,
  buildPackClaims,
  CAPABILITY_CLASSES,
  commitManifest,
  readableAudiences,
  SD_MEMBER,
  type Audience,
  consistencyProof,
  hashToHex,
  leafHash,
  decodePack,
  eventCursorSeq,
  eventShapeProblem,
  INITIAL_STATUS,
  isIssuerError,
  keyUses,
  mintPack,
  passportStateAt,
  signingKeyUses,
  standingQuestions,
  validateCapabilityClass,
  validateIdentity,
  verifyLog,
  verifyPack,
  type PassportIdentity,
  GRANULARITIES,
  type CapabilityClass,
  type DecodedPack,
  type EventRecord,
  type Granularity,
  type KeyUse,
  type PassportState,
  type PassportStatus,
  type PassportVerdict,
  type SignedLogHead,
  MAX_PASSPORTS_PER_CREATION,
} from '../domain/index.js';
import type { PublicUrls } from '../../../lib/config/public-urls.js';
import { actingOperator, DEFAULT_OPERATOR } from '../../../lib/auth/operators.js';
import type { Principal } from '../../../lib/auth/tokens.js';
import type { OperatorSigning } from './operator-signing.js';
import { batchRefused, heldByRestoreProblem, issuerProblem, livePassportProblem, refuseUnrepresentable, type ItemRefusal } from './problems.js';
import type { RegistryClient } from './registry-client.js';
import type { TrustClient } from './trust-client.js';

export interface IssuerSettings {
  /** The default operator's name as issuer: the `iss` of its packs, the issuer in its passports' core. */
  issuer: string;
  /** Largest pack in characters (prefix included). */
  qrBudget: number;
  /** Each service's public base URL: the issuer's is its did:web and the prefix of every URL its credentials carry. */
  publicUrls: PublicUrls;
}

export interface CreatePassportInput {
  identity: string;
  granularity?: string | null;
  typeRef: { id: string; version: number };
  configVector: Record<string, unknown>;
  capabilityClass?: string | null;
}

export interface MintedPackView {
  passportId: string;
  text: string;
  size: number;
  budget: number;
  kid: string;
  claims: Record<string, unknown>;
  mintedAt: Date;
}

/**
 * A passport as it stood at an instant: the row as of then (status, log size and head from the log;
 * the latest pack only if it was minted by then) beside the row of today, whose signed head any
 * later reader checks the head of then against.
 */
export interface PassportAsOf {
  state: PassportState;
  row: PassportRow;
  current: PassportRow;
}

/** Registry questions of one creation in flight at once, at most: a batch of distinct config vectors does not flood the registry. */
const REGISTRY_CONCURRENCY = 8;

type TypeRef = CreatePassportInput['typeRef'];
const modelVersion = (typeRef: TypeRef) => `${typeRef.id}@${typeRef.version}`;

/**
 * What a creation's item is judged on in process, before anything is asked: its identity (the
 * canonical form, returned), granularity, type ref, characters and capability class.
 */
async function checkCreation(input: CreatePassportInput): Promise<PassportIdentity> {
  const identity = await refusing(() => {
    if (input.granularity != null && !(GRANULARITIES as readonly string[]).includes(input.granularity)) {
      throw unprocessable('INVALID_GRANULARITY', `granularity must be one of ${GRANULARITIES.join(', ')}`);
    }
    return validateIdentity(input.identity, (input.granularity ?? undefined) as Granularity | undefined);
  }, issuerProblem);
  if (input.typeRef.id.trim() === '' || input.typeRef.version < 1) {
    throw unprocessable('INVALID_TYPE_REF', 'type_ref needs a model id and a version of at least 1');
  }
  refuseUnrepresentable(input.typeRef.id, 'type_ref.id');
  refuseUnrepresentable(input.configVector, 'config_vector');
  if (input.capabilityClass != null) await refusing(() => validateCapabilityClass(input.capabilityClass), issuerProblem);
  return identity;
}

/** `ask`, asked once per key for the life of the function: the items of one creation that share a question share its answer. */
function askedOnce<Q, A>(ask: (question: Q) => Promise<A>, keyOf: (question: Q) => string): (question: Q) => Promise<A> {
  const answers = new Map<string, Promise<A>>();
  return (question) => {
    const key = keyOf(question);
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = ask(question)));
    return answer;
  };
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachAtMost<T>(limit: number, items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * The claims and carrier kid of a stored pack, or undefined when it cannot be decoded. A pack's text
 * never changes once stored and every read of a passport's signing keys asks for its latest pack's
 * signer (an inflate and a CBOR decode), so the answers for the packs read most are kept, by text.
 */
const packSigners = new LRUCache<string, { signer: Pick<DecodedPack, 'claims' | 'kid'> | undefined }>({ max: 1000 });
function packSigner(text: string): Pick<DecodedPack, 'claims' | 'kid'> | undefined {
  let known = packSigners.get(text);
  if (!known) {
    known = { signer: decodedPackSigner(text) };
    packSigners.set(text, known);
  }
  return known.signer;
}

function decodedPackSigner(text: string): Pick<DecodedPack, 'claims' | 'kid'> | undefined {
  try {
    const { claims, kid } = decodePack(text);
    return { claims, kid };
  } catch (error) {
    if (isIssuerError(error)) return undefined;
    throw error;
  }
}

/** What an identity resolves to: its canonical form and every passport issued for it, the current one first. */
export interface IdentityPassports {
  identity: PassportIdentity;
  /** The live passport first; without one, the newest; then the others, newest first. */
  passports: PassportRow[];
}

/**
 * The issuer a passport of an operator names (its core's `issuer`, its packs' `iss`): the default
 * operator is the platform's issuer of before operators (ISSUER_ID); any other, its operator id.
 */
export function issuerNameOf(settings: Pick<IssuerSettings, 'issuer'>, operator: string): string {
  return operator === DEFAULT_OPERATOR ? settings.issuer : operator;
}

/**
 * The manifest a passport commits to under its profile's audiences (docs/OPERATORS.md, Audiences):
 * each restricted member as a salted digest in `_sd`, its value in a disclosure stored apart. A
 * config vector that has `_sd` of its own while its profile restricts members is refused 422.
 */
function committedManifest(configVector: Record<string, unknown>, profile: Pick<ProfileRecord, 'audiences'> | null) {
  const commitment = commitManifest(configVector, (profile?.audiences ?? {}) as Record<string, Audience>);
  if (commitment.disclosures.length > 0 && Object.hasOwn(configVector, SD_MEMBER)) {
    throw unprocessable('INVALID_CONFIG_VECTOR', `a config vector with restricted members has no member ${SD_MEMBER}: it holds their digests`, { errors: [] });
  }
  return commitment;
}

/** An id PostgreSQL text can hold (no U+0000); any other names no passport. */
function storable(id: string): boolean {
  return !id.includes('\u0000');
}

function parseStored(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Most passports one status-change subscription names. */
export const MAX_STATUS_CHANGE_PASSPORTS = 100;

/** A loader of passport rows by id, read in batches with `read` (whole rows or summaries); null for an unknown id. */
function rowsById<R extends { id: string }>(read: (ids: readonly string[]) => Promise<R[]>): DataLoader<string, R | null> {
  return new DataLoader<string, R | null>(
    async (ids) => {
      const rows = new Map((await read(ids)).map((row) => [row.id, row]));
      return ids.map((id) => rows.get(id) ?? null);
    },
    { cache: false },
  );
}

export class IssuerService {
  constructor(
    private readonly passports: PassportRepository,
    private readonly profiles: ProfileRepository,
    private readonly registry: RegistryClient,
    private readonly trust: TrustClient,
    private readonly keys: KeyStore,
    private readonly signing: OperatorSigning,
    readonly settings: IssuerSettings,
    private readonly metrics: DomainMetrics,
  ) {}

  /**
   * Passport rows and logs are read in batches: everything asked in the same tick (aliases, the
   * passports of a list, the representations of one `_entities` call, concurrent requests) is one
   * statement, so that a request of many passports holds one of the pool's connections, not one per
   * passport (60 aliased `passport(id, at) { asOf { consistencyProof } verdict }` emptied the pool).
   * Nothing is cached: every load is a read of its own moment.
   */
  readonly #rows = rowsById((ids) => this.passports.findMany(ids));
  readonly #summaries = rowsById((ids) => this.passports.findSummaries(ids));
  readonly #logs = new DataLoader<{ passportId: string; logSize: number }, string[]>((logs) => this.passports.eventTexts(logs), { cache: false });
  readonly #logsAt = new DataLoader<{ passportId: string; at: Date; logSize: number }, { texts: string[]; lastHead: SignedLogHead | undefined }>((questions) => this.passports.logsAt(questions), {
    cache: false,
  });

  /** The core document: who the passport speaks for, its type and class, its status. */
  static core(row: PassportRow): Record<string, unknown> {
    return { ...(row.core as Record<string, unknown>), status: row.status };
  }

  /** Creates a passport owned by the caller's operator (the default operator's, for the platform itself), signed with its keys. */
  async createPassport(input: CreatePassportInput, creator: Pick<Principal, 'operator'>): Promise<PassportRow> {
    const created = await this.#create([input], creator);
    if ('refused' in created) throw created.refused[0]!.problem;
    return created.rows[0]!;
  }

  /**
   * Creates up to MAX_PASSPORTS_PER_CREATION passports as createPassport does each, all or none: any
   * refused item (each judged as createPassport judges it, and one identity named twice) refuses the
   * whole creation with one problem naming every refused item by its index. Returns them in order.
   */
  async createPassports(inputs: readonly CreatePassportInput[], creator: Pick<Principal, 'operator'>): Promise<PassportRow[]> {
    if (inputs.length === 0 || inputs.length > MAX_PASSPORTS_PER_CREATION) {
      throw badRequest('INVALID_BATCH_SIZE', `A creation takes 1 to ${MAX_PASSPORTS_PER_CREATION} passports; this one has ${inputs.length}.`, {
        limit: MAX_PASSPORTS_PER_CREATION,
        found: inputs.length,
      });
    }
    const created = await this.#create(inputs, creator);
    if ('refused' in created) throw batchRefused(created.refused, inputs.length);
    return created.rows;
  }

  /**
   * The one way passports are created. Each item is judged in process first (identity, type ref,
   * characters, capability class), then against its profile and its model, each asked once per
   * model version, and its config vector checked in process against that model's schema; an item
   * refused at one step is not judged at the next. Then one signer signs each empty log's head and
   * one transaction writes them all.
   */
  async #create(inputs: readonly CreatePassportInput[], creator: Pick<Principal, 'operator'>): Promise<{ rows: PassportRow[] } | { refused: ItemRefusal[] }> {
    const operator = actingOperator(creator);
    const refused: ItemRefusal[] = [];
    const judged: {
      index: number;
      input: CreatePassportInput;
      identity: PassportIdentity;
      profile?: ProfileRecord | null;
      capabilityClass?: CapabilityClass;
      commitment?: ReturnType<typeof committedManifest>;
    }[] = [];
    /** Runs one item's step: a client's mistake refuses the item; anything else (a registry down) the whole creation. */
    const judging = async (index: number, step: () => Promise<void>): Promise<boolean> => {
      try {
        await step();
        return true;
      } catch (error) {
        if (!(error instanceof ProblemError) || error.problem.status >= 500) throw error;
        refused.push({ index, problem: error });
        return false;
      }
    };

    const firstOf = new Map<string, number>();
    for (const [index, input] of inputs.entries()) {
      await judging(index, async () => {
        const identity = await checkCreation(input);
        const key = `${identity.granularity} ${identity.digital_link}`;
        const first = firstOf.get(key);
        if (first !== undefined) {
          throw unprocessable('DUPLICATE_IDENTITY', `item ${index} names the ${identity.granularity} ${identity.digital_link}, as item ${first} does: one passport per identity`, {
            identity: identity.digital_link,
            granularity: identity.granularity,
            same_as: first,
          });
        }
        firstOf.set(key, index);
        judged.push({ index, input, identity });
      });
    }

    const profileOf = askedOnce((typeRef: TypeRef) => this.profiles.profileFor(typeRef.id, typeRef.version), modelVersion);
    const modelOf = askedOnce((typeRef: TypeRef) => this.registry.model(typeRef), modelVersion);
    const accepted: typeof judged = [];
    await eachAtMost(REGISTRY_CONCURRENCY, judged, async (item) => {
      const { input } = item;
      const passed = await judging(item.index, async () => {
        const profile = await profileOf(input.typeRef);
        const capabilityClass = (input.capabilityClass ?? profile?.defaultCapabilityClass ?? CAPABILITY_CLASSES[0]) as CapabilityClass;
        if (profile && !profile.capabilityClasses.includes(capabilityClass)) {
          throw unprocessable(
            'CAPABILITY_CLASS_NOT_APPLICABLE',
            `passports of ${input.typeRef.id} v${input.typeRef.version} take the profile ${profile.id}, whose capability classes are ${profile.capabilityClasses.join(', ')}`,
            { profile_id: profile.id, capability_classes: profile.capabilityClasses, capability_class: capabilityClass },
          );
        }
        const model = await modelOf(input.typeRef);
        if (!model) {
          throw unprocessable('UNKNOWN_TYPE_REF', `the registry has no model ${input.typeRef.id} at version ${input.typeRef.version}`, { type_ref: input.typeRef });
        }
        const check = model(input.configVector);
        if (!check.ok) {
          throw unprocessable('INVALID_CONFIG_VECTOR', `the config vector does not validate against model ${input.typeRef.id} v${input.typeRef.version}`, { errors: check.errors });
        }
        // Its own `_sd` is a client's mistake of this item (422), judged with the item's other steps.
        Object.assign(item, { profile, capabilityClass, commitment: committedManifest(input.configVector, profile) });
      });
      if (passed) accepted.push(item);
    });
    if (refused.length > 0) return { refused: refused.sort((a, b) => a.index - b.index) };

    accepted.sort((a, b) => a.index - b.index);
    const now = new Date();
    const passports = accepted.map(({ input, identity, profile, capabilityClass, commitment }): NewPassport => {
      const id = randomUUID();
      const claims = (profile?.claims as Record<string, unknown> | undefined) ?? {};
      const { committed, disclosures } = commitment!;
      const core = {
        passport_id: id,
        issuer: issuerNameOf(this.settings, operator),
        identity,
        type_ref: { id: input.typeRef.id, version: input.typeRef.version },
        capability_class: capabilityClass,
        profile_id: profile?.id ?? null,
        claims,
        created_at: now.toISOString(),
      };
      return {
        id,
        operator,
        identity: identity.uri,
        digitalLink: identity.digital_link,
        granularity: identity.granularity,
        typeRef: input.typeRef,
        configVector: committed,
        disclosures,
        capabilityClass: capabilityClass!,
        profileId: profile?.id ?? null,
        claims,
        status: INITIAL_STATUS,
        core,
      };
    });
    const headSigner = await this.signing.signer(operator, 'event');
    try {
      const rows = await this.passports.create(passports, headSigner, now);
      this.metrics.passportsCreated(rows.length);
      return { rows };
    } catch (error) {
      if (!(error instanceof LivePassportExists)) throw error;
      return {
        refused: [...error.live].map(([position, live]) => ({ index: accepted[position]!.index, problem: livePassportProblem(live, accepted[position]!.identity) })),
      };
    }
  }

  /**
   * The passports of an identity (a GS1 Digital Link on any host, or an EPC URN), for the resolver.
   * An identifier that is not one (a wrong check digit, a bad qualifier) is a 400: the resolver's
   * request, not a document, is malformed.
   */
  async passportsOfIdentity(identifier: string): Promise<IdentityPassports> {
    const identity = await refusing(
      () => validateIdentity(identifier),
      (error) => (isIssuerError(error) ? new ProblemError(400, error.code, error.message, { ...error.details }) : undefined),
    );
    return { identity, passports: await this.passports.ofIdentity(identity.digital_link, identity.granularity) };
  }

  async findPassport(id: string): Promise<PassportRow | null> {
    return storable(id) ? this.#rows.load(id) : null;
  }

  /** The summary columns of a passport (PassportSummaryRow), for a request that asks no more of it. */
  async findPassportSummary(id: string): Promise<PassportSummaryRow | null> {
    return storable(id) ? this.#summaries.load(id) : null;
  }

  /**
   * Up to `first` events of a passport's log after the event of cursor `after` (from the first
   * without one), in log order: what a subscriber to the passport's events reads, replaying and live
   * alike; undefined for an unknown passport. A text that is no cursor is a 400 INVALID_CURSOR.
   */
  async eventsAfter(passportId: string, after: string | null, first: number): Promise<StoredEventRow[] | undefined> {
    const afterSeq = after === null ? -1 : eventCursorSeq(after);
    if (afterSeq === undefined) throw badRequest('INVALID_CURSOR', 'after must be the cursor of an event of the passport (its sequence number, as events carry it).');
    return storable(passportId) ? this.passports.eventsAfter(passportId, afterSeq, first) : undefined;
  }

  /**
   * The disclosures of a passport that a caller may read (domain/audiences.ts): none for the public
   * view. Batched: the passports of a request are one statement per audience set.
   */
  async disclosures(row: Pick<PassportRow, 'id' | 'operator'>, reader: Pick<Principal, 'operator' | 'roles'> | undefined): Promise<StoredDisclosure[]> {
    const audiences = readableAudiences(reader, row.operator);
    return audiences.length === 0 ? [] : this.#disclosures.load({ passportId: row.id, audiences: audiences.join(' ') });
  }

  readonly #disclosures = new DataLoader<{ passportId: string; audiences: string }, StoredDisclosure[], string>(
    async (keys) => {
      const byAudiences = new Map<string, string[]>();
      for (const key of keys) {
        const ids = byAudiences.get(key.audiences);
        if (ids) ids.push(key.passportId);
        else byAudiences.set(key.audiences, [key.passportId]);
      }
      const found = new Map<string, StoredDisclosure[]>();
      for (const [audiences, ids] of byAudiences) {
        for (const stored of await this.passports.disclosuresOf(ids, audiences.split(' '))) {
          const key = `${stored.passportId} ${audiences}`;
          const list = found.get(key);
          if (list) list.push(stored);
          else found.set(key, [stored]);
        }
      }
      return keys.map((key) => found.get(`${key.passportId} ${key.audiences}`) ?? []);
    },
    { cache: false, cacheKeyFn: (key) => `${key.passportId} ${key.audiences}` },
  );

  /**
   * Up to `first` status changes after the change of cursor `after` (from the first without one), in
   * the order they were committed: of the passports of `operator`, of the passports named (at most
   * MAX_STATUS_CHANGE_PASSPORTS), of both, or of every passport when neither is given. What a
   * subscriber to status changes reads, replaying and live alike. Ids of no passport match nothing.
   */
  async statusChangesAfter(scope: { operator: string | null; passportIds: readonly string[] | null }, after: string | null, first: number): Promise<StatusChangeRow[]> {
    const { operator, passportIds } = scope;
    if (passportIds && passportIds.length > MAX_STATUS_CHANGE_PASSPORTS) throw badRequest('INVALID_QUERY', `passportIds may name at most ${MAX_STATUS_CHANGE_PASSPORTS} passports.`);
    const afterId = after === null ? 0n : feedCursorId(after);
    if (afterId === undefined) throw badRequest('INVALID_CURSOR', 'after must be the cursor of a status change, as changes carry it.');
    return this.passports.statusChanges.after({ ...(operator === null ? {} : { operator }), ...(passportIds === null ? {} : { passportIds: passportIds.filter(storable) }) }, afterId, first);
  }

  /** The passport that succeeds this one, if one was issued. */
  findSuccessor(id: string): Promise<PassportRow | null> {
    return this.passports.findSuccessor(id);
  }

  findPassports(ids: readonly string[]): Promise<PassportRow[]> {
    return this.passports.findMany(ids.filter(storable));
  }

  /** The summaries of the passports of these ids that exist (no order), in one query. */
  findPassportSummaries(ids: readonly string[]): Promise<PassportSummaryRow[]> {
    return this.passports.findSummaries(ids.filter(storable));
  }

  /**
   * The passport as it stood at `at` (EN 18222 ReadDPPVersionByIdAndDate), from its log: the events
   * recorded up to `at` (inclusive), the status they lead to and the head signed over them. An `at`
   * in the future answers the state of now, which later events may still change. Null for an
   * unknown passport; a 404 NOT_YET_ISSUED problem when it was created after `at`. `reading` is told
   * the log's size before it is read, and may refuse by throwing.
   */
  async passportAt(id: string, atText: string, reading: (logSize: number) => void = () => {}): Promise<PassportAsOf | null> {
    if (!isRfc3339Instant(atText)) throw badRequest('INVALID_QUERY', `at must be ${INSTANT_EXPECTED}; got ${JSON.stringify(atText.slice(0, 64))}`);
    const at = parseInstant(atText);
    const current = await this.findPassport(id);
    if (!current) return null;
    // Read after the row and bounded by its size: an append committing meanwhile (a future `at`)
    // cannot give a state past the head of the row it is checked against.
    reading(current.logSize);
    const log = await this.#logsAt.load({ passportId: id, at, logSize: current.logSize });
    const signedHead = (log.texts.length === 0 ? current.emptyLogHead : log.lastHead) as SignedLogHead | null | undefined;
    const state = await refusing(
      () =>
        passportStateAt({
          passport_id: id,
          created_at: current.createdAt,
          at,
          events: log.texts.map((text) => JSON.parse(text) as EventRecord),
          texts: log.texts,
          ...(signedHead ? { signed_head: signedHead } : {}),
        }),
      issuerProblem,
    );
    if (!state) {
      throw new ProblemError(404, 'NOT_YET_ISSUED', `Passport ${id} did not exist yet at ${at.toISOString()}: it was created at ${current.createdAt.toISOString()}.`, {
        passport_id: id,
        at: at.toISOString(),
        created_at: current.createdAt.toISOString(),
      });
    }
    const packThen = current.latestPackAt !== null && current.latestPackAt.getTime() <= at.getTime();
    const row: PassportRow = {
      ...current,
      status: state.status,
      logSize: state.event_count,
      // Without a head kept from then, the head itself, unsigned: a consistency proof to today's signed head vouches for it.
      logHead: (state.signed_head ?? {
        passport_id: id,
        size: state.head.size,
        root_hash: state.head.root_hash,
        timestamp: state.last_event_at ?? current.createdAt.toISOString(),
      }) as unknown as PassportRow['logHead'],
      latestPack: packThen ? current.latestPack : null,
      latestPackAt: packThen ? current.latestPackAt : null,
    };
    this.#texts.set(row, Promise.resolve(log.texts));
    return { state, row, current };
  }

  /**
   * RFC 6962 PROOF(m, D[n]) from the head of then (size m) to today's signed head (size n), as hex:
   * the one read of the whole log, made only when asked for.
   */
  async consistencyProof(asOf: PassportAsOf): Promise<string[]> {
    const texts = await this.#eventTexts(asOf.current);
    const encoder = new TextEncoder();
    return consistencyProof(
      texts.map((text) => leafHash(encoder.encode(text))),
      asOf.state.event_count,
    ).map(hashToHex);
  }

  /**
   * The keys that signed each passport (events, log head, latest pack) and when, for many passports
   * at once: one query over the event store, the rest from the rows. Keyed by passport id.
   */
  async signingKeys(rows: readonly Pick<PassportRow, 'id' | 'logHead' | 'latestPack'>[]): Promise<Map<string, KeyUse[]>> {
    const ranges = await this.passports.eventKeyRanges(rows.map((row) => row.id));
    const byPassport = new Map<string, { kid: string; first_used: string; last_used: string }[]>();
    for (const range of ranges) {
      const list = byPassport.get(range.passportId) ?? [];
      list.push({ kid: range.kid, first_used: range.first.toISOString(), last_used: range.last.toISOString() });
      byPassport.set(range.passportId, list);
    }
    const uses = new Map<string, KeyUse[]>();
    for (const row of rows) {
      const events = (byPassport.get(row.id) ?? []).sort((a, b) => (a.first_used < b.first_used ? -1 : a.first_used > b.first_used ? 1 : 0));
      // Which key signed the pack, and when, is read without checking signatures: only the verdict judges them.
      uses.set(row.id, signingKeyUses(events, row.logHead as unknown as SignedLogHead, row.latestPack === null ? undefined : packSigner(row.latestPack)));
    }
    return uses;
  }

  /**
   * The events the passport's log head covers, parsed; a row that is no longer JSON is kept as its
   * text, for the verdict to name.
   */
  async events(row: PassportRow): Promise<unknown[]> {
    return (await this.#eventTexts(row)).map(parseStored);
  }

  /**
   * The stored texts of the events a passport row's head covers, read once per row: a request that
   * asks for a passport's events and its verdict (the archive's gathering does) reads the log once.
   * Rows are read anew for each request, so this holds nothing beyond one.
   */
  readonly #texts = new WeakMap<PassportRow, Promise<string[]>>();
  #eventTexts(row: PassportRow): Promise<string[]> {
    let texts = this.#texts.get(row);
    if (!texts) this.#texts.set(row, (texts = this.#logs.load({ passportId: row.id, logSize: row.logSize })));
    return texts;
  }

  /** Appends an event to a passport of the caller's operator (any passport, for the platform itself); another operator's is refused 403. */
  async appendEvent(passportId: string, input: { type: string; payload: Record<string, unknown> }, writer: Pick<Principal, 'operator' | 'credential'>) {
    // Events are stored as their canonical text, where U+0000 is an escape like any other.
    refuseUnrepresentable(input.payload, 'payload', { allowNul: true });
    if (!storable(passportId)) throw notFound(`No passport has id ${passportId}.`);
    const appended = await refusing(
      // Who appended it is part of what the event's signature covers (item 5, docs/OPERATORS.md).
      () => this.passports.append(passportId, { ...input, actor: { operator: writer.operator, credential: writer.credential } }, this.signing.writer(writer)),
      (error) => issuerProblem(error) ?? heldByRestoreProblem(error),
    );
    if (!appended) throw notFound(`No passport has id ${passportId}.`);
    this.metrics.eventAppended(appended.event.type);
    return appended;
  }

  /** Mints a pack of a passport of the caller's operator (any passport, for the platform itself), signed with its owner's carrier key. */
  async mintPack(passportId: string, writer: Pick<Principal, 'operator'>): Promise<MintedPackView> {
    if (!storable(passportId)) throw notFound(`No passport has id ${passportId}.`);
    const minted = await refusing(
      () =>
        this.passports.mintPack(passportId, this.signing.writer(writer), (row, signer, now) => {
          const claims = buildPackClaims({
            issuer: issuerNameOf(this.settings, row.operator),
            passport: {
              id: row.id,
              identity: row.digitalLink,
              type_ref: row.typeRef,
              config_vector: row.configVector,
              capability_class: row.capabilityClass as CapabilityClass,
              status: row.status as PassportStatus,
            },
            head: row.logHead,
            ...(row.lastEvent ? { last_event: row.lastEvent } : {}),
            now,
          });
          const pack = mintPack(claims, signer, this.settings.qrBudget);
          return { passportId: row.id, text: pack.text, size: pack.size, budget: pack.budget, kid: pack.kid, claims: claims as unknown as Record<string, unknown>, mintedAt: now };
        }),
      issuerProblem,
    );
    if (!minted) throw notFound(`No passport has id ${passportId}.`);
    this.metrics.packMinted();
    return minted;
  }

  /** The full pipeline: log, signatures, pack, and the standing of every signing key in trust. */
  async verdict(row: PassportRow): Promise<PassportVerdict & { computed_at: string }> {
    const texts = await this.#eventTexts(row);
    const events = texts.map(parseStored);
    const head = row.logHead as unknown as SignedLogHead;
    const resolveKey = this.keys.resolveKey;
    const pack = row.latestPack === null ? undefined : verifyPack(row.latestPack, resolveKey);
    const wellFormed = events.filter((event) => eventShapeProblem(event) === undefined) as EventRecord[];
    const uses = keyUses(wellFormed, head, pack);
    // Asked before the log is checked: the verdicts of a request, whose logs arrive together, ask
    // the trust service together (TrustClient), and its answer comes while the signatures are checked.
    const [log, standing] = await Promise.all([verifyLog(events, head, resolveKey, row.id, texts), this.trust.standings(standingQuestions(uses))]);
    const verdict = assembleVerdict({
      passport: { id: row.id, status: row.status as PassportStatus },
      log,
      ...(pack ? { pack } : {}),
      key_standing: 'unavailable' in standing ? standing : { uses, answers: standing.answers },
    });
    this.metrics.verdictGiven(verdict.outcome);
    return { ...verdict, computed_at: new Date().toISOString() };
  }
}
