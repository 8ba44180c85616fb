import type { RecordKind } from './kinds.js';
import type { RecordStatus, RecordVersion } from './record.js';

/** One link of a supersession chain. */
export interface SupersessionLink {
  readonly version: number;
  readonly status: RecordStatus;
  /** The version this one supersedes; null for the first. */
  readonly predecessor: number | null;
  /** The version that supersedes this one; null for the latest. */
  readonly successor: number | null;
  /** Whether this is the record's current (latest) version. */
  readonly current: boolean;
  readonly createdAt: string;
  readonly effectiveFrom: string | null;
  readonly effectiveTo: string | null;
}

export interface SupersessionChain {
  readonly kind: RecordKind;
  readonly id: string;
  readonly current: number;
  /** Every version, oldest first. */
  readonly versions: readonly SupersessionLink[];
}

/**
 * The supersession chain of one record from all its stored versions. The versions must be one
 * record's, numbered 1..n without gaps, each superseding its predecessor — anything else is a
 * corrupted store, reported as a plain Error (a bug, not a client mistake).
 */
export function supersessionChain(versions: readonly RecordVersion[]): SupersessionChain {
  if (versions.length === 0) throw new RangeError('a supersession chain needs at least one version');
  const ordered = [...versions].sort((a, b) => a.version - b.version);
  const { kind, id } = ordered[0]!;
  ordered.forEach((v, index) => {
    if (v.kind !== kind || v.id !== id) throw new Error(`versions of ${kind}/${id} and ${v.kind}/${v.id} mixed in one chain`);
    if (v.version !== index + 1 || v.supersedes !== (index === 0 ? null : index)) {
      throw new Error(`${kind}/${id} version ${v.version} breaks the chain (expected version ${index + 1} superseding ${index || 'nothing'})`);
    }
  });
  const current = ordered.length;
  return {
    kind,
    id,
    current,
    versions: ordered.map((v) => ({
      version: v.version,
      status: v.status,
      predecessor: v.supersedes,
      successor: v.version < current ? v.version + 1 : null,
      current: v.version === current,
      createdAt: v.createdAt,
      effectiveFrom: v.effectiveFrom,
      effectiveTo: v.effectiveTo,
    })),
  };
}
