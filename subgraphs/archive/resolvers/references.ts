import { perRequest } from '../../../lib/graphql/batching.js';
import type { SnapshotRepository } from '../data/snapshot-repository.js';
import { ArchivedPassport, Snapshot } from '../schema/snapshot.js';

/**
 * `Snapshot` entities named by other subgraphs, loaded in one query per request however many
 * there are: one DataLoader per request context.
 */
export function snapshotReferences(repository: SnapshotRepository) {
  const loaderFor = perRequest<string, Snapshot | null>(async (ids) => {
    const found = new Map((await repository.findMany(ids)).map((record) => [record.id, Snapshot.from(record)]));
    return ids.map((id) => found.get(id) ?? null);
  });
  return {
    // The archive holds no passports: a passport is its id, and its snapshots are loaded by field.
    Passport: (reference: Record<string, unknown>) => (typeof reference.id === 'string' ? ArchivedPassport.of(reference.id) : null),
    Snapshot: (reference: Record<string, unknown>, context: unknown) => (typeof reference.id === 'string' ? loaderFor(context).load(reference.id) : null),
  };
}
