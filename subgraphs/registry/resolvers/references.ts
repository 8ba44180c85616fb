import { perRequest } from '../../../lib/graphql/batching.js';
import type { RecordRepository } from '../data/record-repository.js';
import { formatRecordRef } from '../domain/index.js';
import type { RegistryRecord } from '../schema/types.js';
import { toRecord } from './records.js';

/** Resolves record references from other subgraphs in batches: one query per request tick. */
export function recordReferences(records: RecordRepository) {
  const loaderFor = perRequest<{ id: string; version: number }, RegistryRecord | null, string>(
    async (refs) => {
      const found = new Map((await records.findMany(refs)).map((version) => [formatRecordRef(version), toRecord(version)]));
      return refs.map((ref) => found.get(formatRecordRef(ref)) ?? null);
    },
    { cacheKeyFn: formatRecordRef },
  );
  return {
    RegistryRecord: (reference: Record<string, unknown>, context: unknown) => {
      const { id, version } = reference;
      if (typeof id !== 'string' || typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) return null;
      return loaderFor(context).load({ id, version });
    },
  };
}
