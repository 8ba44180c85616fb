import { RegistryError } from './errors.js';

/**
 * The kinds of registry records. `generic` records live at the root of the registry (`/{id}`);
 * every other kind has its own collection path.
 */
export const RECORD_KINDS = ['item', 'model', 'service', 'cross_register_mapping', 'protocol_binding', 'verification_mechanism', 'generic'] as const;

export type RecordKind = (typeof RECORD_KINDS)[number];

/** The collection path segment of each kind; generic records have none (they sit at the root). */
export const KIND_COLLECTIONS: Readonly<Record<Exclude<RecordKind, 'generic'>, string>> = {
  item: 'items',
  model: 'models',
  service: 'services',
  cross_register_mapping: 'cross-register-mappings',
  protocol_binding: 'protocol-bindings',
  verification_mechanism: 'verification-mechanisms',
};

/**
 * Kinds that take new versions through the API (`POST …/{id}/versions`), as the specification
 * lists them. Models, protocol bindings and verification mechanisms are versioned too — a
 * passport's type ref names a model version as `id@version` — but their versions come only from
 * the seed and administration, because a model version other records rely on must not be
 * replaced by a routine write.
 */
export const API_VERSIONED_KINDS: ReadonlySet<RecordKind> = new Set<RecordKind>(['item', 'service', 'cross_register_mapping', 'generic']);

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
