import { defineSubgraph } from '../../lib/graphql/subgraph.js';
import { PrismaClient } from '../../prisma/registry/generated/client.js';
import { RecordRepository } from './data/record-repository.js';
import { API_VERSIONED_KINDS, KIND_COLLECTIONS, ModelValidatorCache, RECORD_ID_PATTERN, RECORD_KINDS, RECORD_STATUSES, RESERVED_ROOT_IDS } from './domain/index.js';
import { RegistryRecordResolver, type RegistryDependencies } from './resolvers/records.js';
import { recordReferences } from './resolvers/references.js';

export const createRegistrySubgraph = defineSubgraph<PrismaClient, RegistryDependencies>({
  name: 'registry',
  description:
    'Holds versioned registry records — items, models, services, cross-register mappings, protocol bindings, verification mechanisms — with supersession, model validation and applicability.',
  PrismaClient,
  open: (kernel): RegistryDependencies => ({ records: new RecordRepository(kernel.prisma), validators: new ModelValidatorCache() }),
  resolvers: (dependencies) => [new RegistryRecordResolver(dependencies)],
  references: (dependencies) => recordReferences(dependencies.records),
  discovery: () => ({
    record_kinds: Object.fromEntries(
      RECORD_KINDS.map((kind) => [kind, { path: kind === 'generic' ? '/{id}' : `/${KIND_COLLECTIONS[kind]}/{id}`, versioned_through_api: API_VERSIONED_KINDS.has(kind) }]),
    ),
    record_statuses: RECORD_STATUSES,
    record_id_pattern: RECORD_ID_PATTERN.source,
    reserved_root_ids: RESERVED_ROOT_IDS,
    profile_manifest_schema: '/schemas/profile-manifest',
  }),
});
