/**
 * Taking a snapshot: gather the passport through the graph, write its bag straight into storage
 * (one pass, one chunk in memory), and notarize the digest of exactly the bytes stored — all
 * committed together or not at all.
 */
import { refuseUnlessOwner } from '../../../lib/auth/operators.js';
import type { Principal } from '../../../lib/auth/tokens.js';
import type { DomainMetrics } from '../../../lib/ops/metrics.js';
import { randomUUID } from 'node:crypto';
import type { Signer } from '../../../lib/crypto/index.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { badRequest, ProblemError, unprocessable } from '../../../lib/problem.js';
import type { SnapshotRecord, SnapshotRepository } from '../data/snapshot-repository.js';
import { ArchiveError, bagStream, notarize, snapshotBag, type BagStream, type SnapshotContent } from '../domain/index.js';
import { gatherPassport } from './gather.js';

/** The media type of a snapshot's bytes: one POSIX ustar archive. */
export const SNAPSHOT_MEDIA_TYPE = 'application/x-tar';

/** Sizes are 32-bit integers in storage and in GraphQL. */
export const MAX_SNAPSHOT_SIZE = 2 ** 31 - 1;

/** Passport ids are opaque to the archive; it asks only that they be one reasonable line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const PASSPORT_ID = /^[^\u0000-\u001f\u007f]{1,200}$/u;

export interface SnapshotServiceOptions {
  repository: SnapshotRepository;
  gateway: GatewayClient;
  /** The current notary key; asked for at notarization time, so a rotation takes effect at once. */
  notary: () => Signer;
  /** Source-Organization of every bag. */
  sourceOrganization: string;
  /** Bag-Software-Agent of every bag. */
  softwareAgent: string;
  /** Counts the snapshots taken (lib/ops/metrics.ts). */
  metrics: Pick<DomainMetrics, 'snapshotTaken'>;
  clock?: () => Date;
  newId?: () => string;
}

export class SnapshotService {
  readonly #options: SnapshotServiceOptions;
  readonly #clock: () => Date;
  readonly #newId: () => string;

  constructor(options: SnapshotServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? (() => new Date());
    this.#newId = options.newId ?? randomUUID;
  }

  /**
   * Snapshots a passport of the creator's operator (any, for the platform itself). Throws a
   * ProblemError: 400 for an id that cannot be one, 422 for a passport the issuer does not know, 403
   * for another operator's (OWNED_BY_ANOTHER_OPERATOR), 413 for a bag too large to store, 503 when a service it
   * needs is out of reach for now, 502 when the graph does not answer with usable content; in every
   * case nothing is stored.
   */
  async create(passportId: string, creator: Pick<Principal, 'operator'>): Promise<SnapshotRecord> {
    if (!PASSPORT_ID.test(passportId) || passportId.trim() !== passportId) {
      throw badRequest('INVALID_PASSPORT_ID', 'passport_id must be 1 to 200 characters without control characters or surrounding spaces.');
    }
    const { operator, content } = await this.#gather(passportId);
    refuseUnlessOwner(creator, { kind: 'passport', id: passportId, owner: operator });
    const id = this.#newId();
    const createdAt = this.#clock();
    const bag = this.#bag(id, createdAt, content);
    if (bag.size > MAX_SNAPSHOT_SIZE) {
      throw new ProblemError(413, 'SNAPSHOT_TOO_LARGE', `The snapshot would be ${bag.size} bytes; the archive stores at most ${MAX_SNAPSHOT_SIZE}.`, { size: bag.size, limit: MAX_SNAPSHOT_SIZE });
    }
    const { repository, notary } = this.#options;
    const snapshot = await repository.create(id, bag, () => {
      const summary = bag.summary();
      const signer = notary();
      const notarization = notarize(
        {
          snapshot_id: id,
          passport_id: content.passportId,
          bag_sha512: summary.sha512,
          bag_size: summary.size,
          notarized_at: this.#clock().toISOString(),
          tagmanifest_sha512: summary.tagmanifestSha512,
        },
        signer,
      );
      return {
        passportId: content.passportId,
        createdAt,
        size: summary.size,
        sha512: summary.sha512,
        tagmanifestSha512: summary.tagmanifestSha512,
        payloadOxum: summary.payloadOxum,
        notarization: { ...notarization },
        notaryKid: signer.kid,
      };
    });
    this.#options.metrics.snapshotTaken();
    return snapshot;
  }

  async #gather(passportId: string): Promise<{ operator: string; content: SnapshotContent }> {
    let gathered: Awaited<ReturnType<typeof gatherPassport>>;
    try {
      gathered = await gatherPassport(this.#options.gateway, passportId);
    } catch (error) {
      if (error instanceof ProblemError) {
        // The issuer may answer an unknown id with a problem rather than null.
        if (error.problem.status === 404) throw unknownPassport(passportId);
        // A refusal of the request, or a service out of reach for now (the issuer's database, the
        // gateway: 503 with when to try again), is the client's answer as it stands.
        if (error.problem.status < 500 || error.problem.status === 503) throw error;
      }
      throw new ProblemError(502, 'GATHER_FAILED', `The archive could not gather passport ${passportId} through the graph: ${(error as Error).message}`);
    }
    if (!gathered) throw unknownPassport(passportId);
    return gathered;
  }

  #bag(id: string, createdAt: Date, content: SnapshotContent): BagStream {
    try {
      return bagStream(
        snapshotBag({
          snapshotId: id,
          baggedAt: createdAt.toISOString(),
          content,
          sourceOrganization: this.#options.sourceOrganization,
          softwareAgent: this.#options.softwareAgent,
        }),
      );
    } catch (error) {
      // The request was fine; what the other services answered cannot be archived as it is.
      if (error instanceof ArchiveError) throw new ProblemError(502, 'UNARCHIVABLE_CONTENT', `The passport's content from the graph cannot be bagged: ${error.message}`, { reason: error.code });
      throw error;
    }
  }
}

function unknownPassport(passportId: string): ProblemError {
  return unprocessable('UNKNOWN_PASSPORT', `The issuer has no passport ${passportId}; nothing was stored.`, { passport_id: passportId });
}
