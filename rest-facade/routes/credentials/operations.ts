/** The GraphQL documents the issuer's credential routes send through the gateway. */

export const CREDENTIAL = 'query PassportCredential($id: ID!, $at: String) { passport(id: $id, at: $at) { credential { jwt } } }';

export const DID_DOCUMENT = 'query IssuerDidDocument { issuerDidDocument }';

export const PASSPORT_CONTEXT = 'query IssuerPassportContext { issuerPassportContext }';

export const VOCABULARY = 'query IssuerVocabulary { issuerVocabulary }';

export const STATUS_LIST = 'query IssuerStatusList($purpose: String!, $list: Int!) { issuerStatusList(purpose: $purpose, list: $list) { jwt } }';
