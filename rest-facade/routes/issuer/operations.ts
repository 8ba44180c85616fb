/** The GraphQL documents the issuer's passport and admin routes send through the gateway. */

const PASSPORT_FIELDS = `passport_id: id status core manifest log_head: logHead capability_class: capabilityClass log_size: logSize latest_pack: latestPack predecessor_id: predecessorId disclosures { audience name value disclosure }`;

export const CREATE_PASSPORT = `mutation CreatePassport($input: CreatePassportInput!) { passport: createPassport(input: $input) { ${PASSPORT_FIELDS} } }`;

export const CREATE_PASSPORTS = `mutation CreatePassports($inputs: [CreatePassportInput!]!) { passports: createPassports(inputs: $inputs) { ${PASSPORT_FIELDS} } }`;

export const PASSPORT = `query Passport($id: ID!, $withEvents: Boolean!, $at: String, $asOf: Boolean!, $withProof: Boolean!) {
  passport(id: $id, at: $at) {
    ${PASSPORT_FIELDS} events @include(if: $withEvents)
    as_of: asOf @include(if: $asOf) { at head_signed: headSigned last_event_at: lastEventAt current_log_head: currentLogHead consistency_proof: consistencyProof @include(if: $withProof) }
  }
}`;

export const APPEND_EVENT = `mutation AppendPassportEvent($passportId: ID!, $type: String!, $payload: JSONObject!) {
  appended: appendPassportEvent(passportId: $passportId, type: $type, payload: $payload) { event log_head: logHead status }
}`;

/** Whether the passport exists and the cursor is one, before its event stream opens. */
export const EVENTS_AFTER = `query PassportEventsAfter($id: ID!, $after: String) { events: passportEventsAfter(passportId: $id, after: $after, first: 1) { pageInfo { endCursor } } }`;

export const PASSPORT_EVENTS = `subscription PassportEvents($id: ID!, $after: String) { event: passportEvents(passportId: $id, after: $after) { cursor record } }`;

export const MINT_PACK = `mutation MintPassportPack($passportId: ID!) {
  pack: mintPassportPack(passportId: $passportId) { passport_id: passportId text size budget kid claims minted_at: mintedAt }
}`;

export const VERDICT = `query PassportVerdict($id: ID!) { passport(id: $id) { verdict } }`;

export const UPSERT_PROFILE = `mutation UpsertIssuerProfile($input: IssuerProfileInput!) {
  profile: upsertIssuerProfile(input: $input) {
    profile_id: id description capability_classes: capabilityClasses default_capability_class: defaultCapabilityClass claims audiences
    created_at: createdAt updated_at: updatedAt created
  }
}`;

export const SET_APPLICABILITY = `mutation SetIssuerApplicability($input: IssuerApplicabilityInput!) {
  rule: setIssuerApplicability(input: $input) { model_id: modelId model_version: modelVersion profile_id: profileId created_at: createdAt updated_at: updatedAt created }
}`;

export const ACKNOWLEDGE_RESTORE = `mutation AcknowledgeRestore {
  acknowledged: acknowledgeRestore {
    restored_at: restoredAt snapshot_at: snapshotAt backup passports acknowledged_at: acknowledgedAt acknowledged_by: acknowledgedBy
  }
}`;
