import { API_VERSIONED_KINDS, KIND_COLLECTIONS, type RecordKind } from '../../../lib/formats/registry/records.js';
import { RegistryError } from './errors.js';

export { API_VERSIONED_KINDS, KIND_COLLECTIONS, RECORD_KINDS, type RecordKind } from '../../../lib/formats/registry/records.js';

/** The kind whose collection path segment is `segment`, if any. */
export function kindOfCollection(segment: string): RecordKind | undefined {
  const entry = Object.entries(KIND_COLLECTIONS).find(([, path]) => path === segment);
  return entry?.[0] as RecordKind | undefined;
}

/** Throws NOT_VERSIONABLE for kinds whose versions the API does not accept. */
export function assertVersionableThroughApi(kind: RecordKind): void {
  if (!API_VERSIONED_KINDS.has(kind)) {
    throw new RegistryError('NOT_VERSIONABLE', `records of kind ${kind} take no new versions through the API`);
  }
}
