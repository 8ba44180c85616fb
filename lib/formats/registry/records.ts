/**
 * The registry's record vocabulary as its REST paths and documents spell it: the kinds of records,
 * the collection path of each, which kinds take new versions through the API, and the statuses of a
 * version. The registry's rules over them are its own (subgraphs/registry/domain/).
 */

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

/**
 * Status of one record version. Versions are immutable, so a record changes status by gaining a
 * version: `draft` (proposed, not in force), `active` (in force), `deprecated` (in force, to be
 * replaced; new uses are discouraged), `withdrawn` (no longer in force; final).
 */
export const RECORD_STATUSES = ['draft', 'active', 'deprecated', 'withdrawn'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];
