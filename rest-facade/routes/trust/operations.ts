/** The GraphQL documents the trust service's routes send through the gateway. */

// Selections with aliases, so REST bodies come out in snake_case.
const NODE = 'id kind jurisdiction keys threshold group_key: groupKey';
const EDGE = 'id iss sub scope iat nbf exp kid credential';
const ENTRY_STATUS = 'service_type: serviceType name node_id: nodeId status status_starting_time: statusStartingTime';
const ENTRY = `id ${ENTRY_STATUS} history { ${ENTRY_STATUS} }`;
const LIST = `jurisdiction framework sequence_number: sequenceNumber issued_at: issuedAt next_update: nextUpdate entries { ${ENTRY} }`;
const VERDICT = 'valid required quorate reasons { index kid outcome } explanation';
const MASTER_LIST_ENTRY = `id body cosignatures verdict { ${VERDICT} }`;
const REVOCATION = 'subject reason effective_at: effectiveAt recorded_at: recordedAt retroactive attestation';

export const UPSERT_NODE = `mutation UpsertTrustNode($input: TrustNodeInput!) { upsertTrustNode(input: $input) { created node { ${NODE} } } }`;

export const ADD_EDGE = `mutation AddTrustEdge($credential: JSON!) { addTrustEdge(credential: $credential) { created edge { ${EDGE} } } }`;

/** One page of the graph; GET /graph runs it for every page of its streamed body. */
export const GRAPH_PAGE = `query TrustGraphPage($first: Int, $after: String) { trustGraphPage(first: $first, after: $after) { version nodes { ${NODE} } edges { ${EDGE} } revocations { ${REVOCATION} } pageInfo { endCursor } } }`;

export const TRUST_LISTS = `query TrustLists($at: String, $jurisdiction: String, $framework: String) { trustLists(at: $at, jurisdiction: $jurisdiction, framework: $framework) { ${LIST} } }`;

export const REGISTER_TRUST_LIST = `mutation RegisterTrustList($input: TrustListInput!) { registerTrustList(input: $input) { ${LIST} } }`;

export const TRUST_LIST = `query TrustList($jurisdiction: String!, $at: String) { trustList(jurisdiction: $jurisdiction, at: $at) { ${LIST} } }`;

export const UPSERT_TRUST_LIST_ENTRY = `mutation UpsertTrustListEntry($jurisdiction: String!, $input: TrustListEntryInput!) {
  upsertTrustListEntry(jurisdiction: $jurisdiction, input: $input) { created changed entry { ${ENTRY} } list { ${LIST} } }
}`;

export const MASTER_LIST = `query MasterList { trustMasterList { origin shape m k witnessSet { keys recordedAt } entries { ${MASTER_LIST_ENTRY} } } }`;

export const REPLACE_WITNESS_SET = 'mutation ReplaceWitnessSet($input: TrustWitnessSetInput!) { replaceTrustWitnessSet(input: $input) { m keys recorded_at: recordedAt } }';

export const UPSERT_MASTER_LIST_ENTRY = `mutation UpsertMasterListEntry($input: TrustMasterListEntryInput!) { upsertTrustMasterListEntry(input: $input) { created ${MASTER_LIST_ENTRY} } }`;

/** One page of revocations; GET /revocations runs it for every page of its streamed body. */
export const REVOCATION_PAGE = `query RevocationPage($first: Int, $after: String, $at: String, $knownBy: String, $window: String, $subject: String, $retroactive: Boolean) {
  trustRevocationPage(first: $first, after: $after, at: $at, knownBy: $knownBy, window: $window, subject: $subject, retroactive: $retroactive) { nodes { ${REVOCATION} } pageInfo { endCursor } }
}`;

export const DECLARE_REVOCATION = `mutation DeclareRevocation($input: TrustRevocationInput!) { declareTrustRevocation(input: $input) { ${REVOCATION} } }`;

export const ANCHOR_BUNDLE = 'query AnchorBundle($jurisdiction: String) { trustAnchorBundle(jurisdiction: $jurisdiction) }';

export const KEY_PATH = 'query KeyPath($kid: String!) { trustKeyPath(kid: $kid) }';
