/** The GraphQL documents the registry's routes send through the gateway; `$kind` narrows a record route to its collection. */

const RECORD_FIELDS = `id kind version status body effective_from: effectiveFrom effective_to: effectiveTo created_at: createdAt
    supersedes superseded_by: supersededBy current current_version: currentVersion path`;

export const RECORD = `query RegistryRecord($id: ID!, $version: Int, $kind: String) { registryRecord(id: $id, version: $version, kind: $kind) { ${RECORD_FIELDS} } }`;

export const SUPERSESSION = `query RegistrySupersession($id: ID!, $kind: String) {
  registrySupersession(id: $id, kind: $kind) { id kind current versions { version status predecessor successor current created_at: createdAt effective_from: effectiveFrom effective_to: effectiveTo } }
}`;

export const APPEND_VERSION = `mutation AppendRegistryRecordVersion($id: ID!, $kind: String, $input: RegistryVersionInput!) {
  appendRegistryRecordVersion(id: $id, kind: $kind, input: $input) { ${RECORD_FIELDS} }
}`;

export const RECORDS = `query RegistryRecords($kind: String!, $limit: Int, $cursor: String, $status: String, $idPrefix: String, $updatedSince: String) {
  registryRecords(kind: $kind, first: $limit, after: $cursor, status: $status, idPrefix: $idPrefix, updatedSince: $updatedSince) { records: nodes { ${RECORD_FIELDS} } pageInfo { endCursor } }
}`;

export const CREATE_RECORD = `mutation CreateRegistryRecord($input: RegistryRecordInput!) { createRegistryRecord(input: $input) { ${RECORD_FIELDS} } }`;

export const SEED = `mutation SeedRegistry { seedRegistry { records versions_inserted: versionsInserted versions_present: versionsPresent skipped { kind id reason } } }`;

export const APPLICABILITY = `query RegistryApplicability($productCategory: String, $jurisdiction: String, $at: String) {
  registryApplicability(productCategory: $productCategory, jurisdiction: $jurisdiction, at: $at) {
    at product_category: productCategory jurisdiction
    models { id version ref status product_categories: productCategories jurisdictions effective_from: effectiveFrom effective_to: effectiveTo }
    profiles { id version ref status model product_categories: productCategories jurisdictions effective_from: effectiveFrom effective_to: effectiveTo }
  }
}`;

export const PROFILE_MANIFEST_SCHEMA = 'query RegistryProfileManifestSchema { registryProfileManifestSchema }';

export const VALIDATE_DOCUMENT = `query RegistryValidateDocument($modelId: ID!, $version: Int, $document: JSON) { registryValidateDocument(modelId: $modelId, version: $version, document: $document) }`;
