/** The JSON Schemas of the issuer's passport and admin request bodies and answers, each answer with its example. */
import {
  ATTESTED,
  AUDIENCES,
  CAPABILITY_CLASSES,
  MAX_PASSPORTS_PER_CREATION,
  CHECK_OUTCOMES,
  EVENT_TYPES,
  GRANULARITIES,
  IDENTITY_SCHEMES,
  PASSPORT_STATUSES,
  RESTRICTED_AUDIENCES,
  VERDICT_CHECKS,
  VERDICT_OUTCOMES,
} from '../../../lib/formats/issuer/index.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, detachedJws, EXAMPLE_KID, EXAMPLE_SIGNATURE, EXAMPLE_TIME, freeObject, hex256, nullableDateTime, signed, thumbprint } from '../../schemas.js';

const typeRef = closed({ id: { type: 'string', description: 'Registry model id.' }, version: { type: 'integer', minimum: 1 } });

const logHead = signed(
  { passport_id: { type: 'string' }, size: { type: 'integer', minimum: 0 }, root_hash: hex256, timestamp: dateTime },
  {},
  'Signed checkpoint of the log by the event key: its size and RFC 6962 root.',
);
const event = signed(
  {
    passport_id: { type: 'string' },
    seq: { type: 'integer', minimum: 0 },
    type: { enum: EVENT_TYPES },
    payload: freeObject('Per the type’s schema; EPCIS events keep EPCIS 2.0 member names (camelCase).'),
    recorded_at: dateTime,
    prev_hash: { ...hex256, description: 'SHA-256 of the previous event (RFC 8785 form, signature included); 64 zeros for the first.' },
    trust: { const: ATTESTED },
    kid: thumbprint,
  },
  {
    actor: closed(
      {
        operator: { type: ['string', 'null'], description: 'The operator the writer acted for; null for the platform itself.' },
        credential: { type: 'string', description: 'What authenticated the writer: a token’s id (or a configured token’s name), or an access token’s sub.' },
      },
      {},
      'Who appended the event, covered by its signature (absent from events appended before operators).',
    ),
  },
  'A signed event by the event key of the passport’s operator.',
);

const passportSchema = closed(
  {
    passport_id: { type: 'string' },
    status: { enum: PASSPORT_STATUSES },
    core: closed(
      {
        passport_id: { type: 'string' },
        issuer: { type: 'string' },
        identity: closed(
          {
            uri: { type: 'string', description: 'The identifier exactly as given.' },
            scheme: { enum: IDENTITY_SCHEMES },
            granularity: { enum: GRANULARITIES },
            gtin: { type: 'string', pattern: '^[0-9]{14}$' },
            digital_link: { type: 'string', description: 'Canonical GS1 Digital Link.' },
          },
          { variant: { type: 'string' }, lot: { type: 'string' }, serial: { type: 'string' } },
        ),
        type_ref: typeRef,
        capability_class: { enum: CAPABILITY_CLASSES },
        profile_id: { type: ['string', 'null'] },
        claims: freeObject('The claims of the profile, copied at creation.'),
        created_at: dateTime,
      },
      { status: { enum: PASSPORT_STATUSES } },
      'Identity, type ref, capability class, profile and claims.',
    ),
    manifest: freeObject(
      'The committed manifest: the config vector, each member the profile restricts replaced by its salted digest in `_sd` (RFC 9901). Exactly the config vector when nothing is restricted.',
    ),
    log_head: logHead,
    capability_class: { enum: CAPABILITY_CLASSES },
    log_size: { type: 'integer', minimum: 0 },
    latest_pack: { type: ['string', 'null'], description: 'The text of the latest Tier-A pack.' },
    predecessor_id: {
      type: ['string', 'null'],
      description: 'The passport of the same identity this one succeeds (revoked or at end of life when this one was created); null for the first.',
    },
  },
  {
    log: { type: 'array', items: event, description: 'Every signed event in sequence order (empty on creation; with include_events=true).' },
    disclosures: {
      type: 'array',
      description: 'The restricted members the caller may read (docs/OPERATORS.md, Audiences); absent when none.',
      items: closed({
        audience: { enum: RESTRICTED_AUDIENCES },
        name: { type: 'string' },
        value: {
          description: 'The member’s value: any JSON.',
          anyOf: [freeObject('An object.'), { type: 'array', description: 'An array.' }, { type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }],
        },
        disclosure: { type: 'string', description: 'base64url of [salt, name, value] (RFC 9901 §4.2.1); its base64url SHA-256 is in manifest._sd.' },
      }),
    },
  },
);
/** GET /passports/{id}?at=: the head of then may be unsigned (none kept), and `as_of` says what ties it to today's. */
const unsignedLogHead = closed(
  { passport_id: { type: 'string' }, size: { type: 'integer', minimum: 0 }, root_hash: hex256, timestamp: dateTime },
  {},
  'The head at `at` when no checkpoint signed then was kept (as_of.head_signed false): its timestamp is the last event’s recorded_at.',
);
const passportReadSchema = {
  ...passportSchema,
  properties: {
    ...(passportSchema.properties as Record<string, JsonSchema>),
    log_head: { anyOf: [logHead, unsignedLogHead] },
    as_of: closed(
      {
        at: { ...dateTime, description: 'The instant asked about, in UTC; events recorded at it are included.' },
        head_signed: { type: 'boolean', description: 'Whether log_head is the checkpoint the issuer signed at the last append up to `at` (or at creation).' },
        last_event_at: { ...nullableDateTime, description: 'recorded_at of the last event up to `at`; null for an empty log.' },
        current_log_head: logHead,
      },
      {
        consistency_proof: {
          type: 'array',
          items: hex256,
          description: 'With include_proof=true: RFC 6962 consistency proof from log_head to current_log_head (RFC 9162 §2.1.4.2).',
        },
      },
      'With `at` only: the instant, and what ties log_head to today’s signed head.',
    ),
  },
};
const PASSPORT_ID = '5638f8d6-b669-41f8-8bdb-255c5ecb997e';
const ROOT_HASH = '8b110ea46b87bb3d16dd4f6560e49712657c0cc4073fbaf0ad0781a5253b9573';
const PASSPORT_EXAMPLE = {
  passport_id: PASSPORT_ID,
  status: 'draft',
  core: {
    passport_id: PASSPORT_ID,
    issuer: 'passport-issuer',
    identity: {
      uri: 'https://id.gs1.org/01/09520123456788/21/SN-1',
      scheme: 'gs1-digital-link',
      granularity: 'item',
      gtin: '09520123456788',
      serial: 'SN-1',
      digital_link: 'https://id.gs1.org/01/09520123456788/21/SN-1',
    },
    type_ref: { id: 'battery-passport', version: 1 },
    capability_class: 'verify-offline',
    profile_id: null,
    claims: {},
    created_at: EXAMPLE_TIME,
  },
  manifest: { chemistry: 'LFP', capacity_kwh: 75 },
  log_head: { passport_id: PASSPORT_ID, size: 0, root_hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', timestamp: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE },
  capability_class: 'verify-offline',
  log_size: 0,
  latest_pack: null,
  predecessor_id: null,
  log: [],
};
const EVENT_EXAMPLE = {
  passport_id: PASSPORT_ID,
  seq: 0,
  type: 'activated',
  payload: { placed_on_market_at: '2025-02-01T00:00:00Z' },
  recorded_at: EXAMPLE_TIME,
  prev_hash: '0'.repeat(64),
  trust: ATTESTED,
  kid: EXAMPLE_KID,
  signature: EXAMPLE_SIGNATURE,
};
const LOG_HEAD_EXAMPLE = { passport_id: PASSPORT_ID, size: 1, root_hash: ROOT_HASH, timestamp: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE };

export const newPassport = answer(passportSchema, PASSPORT_EXAMPLE);
export const newPassports = answer(closed({ passports: { type: 'array', items: passportSchema, description: 'The passports created, in the order of the request.' } }), {
  passports: [PASSPORT_EXAMPLE],
});
export const passport = answer(passportReadSchema, { ...PASSPORT_EXAMPLE, status: 'active', log_head: LOG_HEAD_EXAMPLE, log_size: 1, log: [EVENT_EXAMPLE] });

export const passportBody: JsonSchema = {
  type: 'object',
  required: ['identity', 'type_ref', 'config_vector'],
  properties: {
    identity: { type: 'string', description: 'GS1 Digital Link URI (https://…/01/{gtin}[/22/…][/10/…][/21/…]) or EPC URN.' },
    granularity: { enum: GRANULARITIES, description: 'Checked against the identifier when given.' },
    type_ref: {
      type: 'object',
      required: ['id', 'version'],
      properties: { id: { type: 'string', description: 'Registry model id.' }, version: { type: 'integer', minimum: 1 } },
    },
    config_vector: { type: 'object', additionalProperties: true, description: 'Validated against the registry model; returned as the manifest.' },
    capability_class: { enum: CAPABILITY_CLASSES, description: "Defaults to the applicable profile's default, else identify." },
  },
};

export const passportBatchBody: JsonSchema = {
  type: 'object',
  required: ['passports'],
  properties: {
    passports: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_PASSPORTS_PER_CREATION,
      items: passportBody,
      description: `1 to ${MAX_PASSPORTS_PER_CREATION} passports, each as POST /passports takes it, each of a different identity; created all or none, within BODY_LIMIT_BYTES.`,
    },
  },
};

export const eventBody: JsonSchema = {
  type: 'object',
  required: ['type', 'payload'],
  properties: {
    type: {
      enum: EVENT_TYPES,
      description: 'Lifecycle events change the status; EPCIS 2.0 traceability events do not. Payload schemas: the discovery document.',
    },
    payload: { type: 'object', additionalProperties: true, description: 'Per the type’s schema; EPCIS events keep EPCIS 2.0 member names (camelCase).' },
  },
};
export const appended = answer(closed({ event, log_head: logHead, status: { enum: PASSPORT_STATUSES } }), { event: EVENT_EXAMPLE, log_head: LOG_HEAD_EXAMPLE, status: 'active' });

const packClaims = closed(
  {
    iss: { type: 'string' },
    sub: { type: 'string' },
    iat: { type: 'integer', description: 'NumericDate.' },
    capability_class: { enum: CAPABILITY_CLASSES },
    type_ref: typeRef,
    status: { enum: PASSPORT_STATUSES },
  },
  {
    log: closed({ size: { type: 'integer', minimum: 0 }, root_hash: hex256 }),
    identity: { type: 'string' },
    manifest_digest: { ...hex256, description: 'SHA-256 of the RFC 8785 form of the config vector.' },
    last_event: closed({ seq: { type: 'integer', minimum: 0 }, type: { enum: EVENT_TYPES }, recorded_at: dateTime }),
    log_head: closed({ timestamp: dateTime, signature: detachedJws }),
  },
  'The claims the pack carries (CBOR keys in the discovery document), as JSON.',
);
export const pack = answer(
  closed({
    passport_id: { type: 'string' },
    text: { type: 'string', pattern: '^DPP1:[0-9A-Z $%*+\\-./:]*$' },
    size: { type: 'integer', minimum: 0, description: 'Characters of text.' },
    budget: { type: 'integer', description: 'The QR budget: the most characters a pack may have.' },
    kid: thumbprint,
    claims: packClaims,
    minted_at: dateTime,
  }),
  {
    passport_id: PASSPORT_ID,
    text: 'DPP1:NCF3+EAWPMWQ000K8E67T5248$70%RL.6A*3XHDG-K40N5JMEONO+JWW5GYQQKG4',
    size: 69,
    budget: 1134,
    kid: EXAMPLE_KID,
    claims: {
      iss: 'passport-issuer',
      sub: PASSPORT_ID,
      iat: 1795587614,
      capability_class: 'trace',
      type_ref: { id: 'battery-passport', version: 1 },
      status: 'active',
      log: { size: 1, root_hash: ROOT_HASH },
    },
    minted_at: EXAMPLE_TIME,
  },
);

const problemList: JsonSchema = {
  type: 'array',
  items: closed({ code: { type: 'string' }, message: { type: 'string' } }, { seq: { type: 'integer', minimum: 0 }, reason: { type: 'string' } }),
};
const signatureFailures: JsonSchema = { type: 'array', items: closed({ seq: { type: 'integer', minimum: 0 }, reason: { type: 'string' }, message: { type: 'string' } }) };
const checkNames = VERDICT_CHECKS.map(({ check }) => check);
export const verdict = answer(
  closed({
    passport_id: { type: 'string' },
    outcome: { enum: VERDICT_OUTCOMES },
    log_verdict: closed({
      ok: { type: 'boolean' },
      passport_id: { type: 'string' },
      size: { type: 'integer', minimum: 0 },
      chain: closed({ ok: { type: 'boolean' }, problems: problemList }),
      replay: closed({ ok: { type: 'boolean' }, status: { enum: PASSPORT_STATUSES }, problems: problemList }),
      head: closed({ ok: { type: 'boolean' }, checked: { type: 'boolean' }, problems: problemList }, { kid: { type: 'string' } }),
      root: closed({ ok: { type: 'boolean' }, checked: { type: 'boolean' }, computed: hex256 }, { signed: hex256 }),
      problems: problemList,
    }),
    event_signature_audit: closed({ verified: { type: 'integer', minimum: 0 }, total: { type: 'integer', minimum: 0 }, first_failing_seq: { type: ['integer', 'null'] }, failures: signatureFailures }),
    pack_verdict: closed(
      { present: { type: 'boolean' }, ok: { type: 'boolean' } },
      { kid: { type: 'string' }, capability_class: { type: 'string' }, reason: { type: 'string' }, message: { type: 'string' } },
    ),
    checks: { type: 'array', items: closed({ check: { enum: checkNames }, outcome: { enum: CHECK_OUTCOMES }, detail: { type: 'string' } }) },
    coverage: closed({
      checks_run: { type: 'integer', minimum: 0 },
      checks_total: { type: 'integer', minimum: 0 },
      not_run: { type: 'array', items: closed({ check: { enum: checkNames }, why: { type: 'string' } }) },
    }),
    computed_at: dateTime,
  }),
  {
    passport_id: PASSPORT_ID,
    outcome: 'incomplete',
    log_verdict: {
      ok: true,
      passport_id: PASSPORT_ID,
      size: 1,
      chain: { ok: true, problems: [] },
      replay: { ok: true, status: 'active', problems: [] },
      head: { ok: true, checked: true, kid: EXAMPLE_KID, problems: [] },
      root: { ok: true, checked: true, computed: ROOT_HASH, signed: ROOT_HASH },
      problems: [],
    },
    event_signature_audit: { verified: 1, total: 1, first_failing_seq: null, failures: [] },
    pack_verdict: { present: false, ok: false },
    checks: [{ check: 'log.chain', outcome: 'passed', detail: '1 event chained from the genesis value' }],
    coverage: { checks_run: 6, checks_total: 12, not_run: [{ check: 'pack.signature', why: 'no pack has been minted' }] },
    computed_at: EXAMPLE_TIME,
  },
);

const profileSchema = closed({
  profile_id: { type: 'string' },
  description: { type: ['string', 'null'] },
  capability_classes: { type: 'array', items: { enum: CAPABILITY_CLASSES }, minItems: 1 },
  default_capability_class: { oneOf: [{ enum: CAPABILITY_CLASSES }, { type: 'null' }] },
  claims: freeObject('Copied verbatim into the core of every passport created under the profile.'),
  audiences: { type: 'object', additionalProperties: { enum: RESTRICTED_AUDIENCES }, description: 'The audience of each config vector member the profile restricts; any other is public.' },
  created_at: dateTime,
  updated_at: dateTime,
});
export const profile = answer(profileSchema, {
  profile_id: 'ev-battery',
  description: 'EV batteries',
  capability_classes: ['trace', 'verify-offline'],
  default_capability_class: 'trace',
  claims: { regulation: 'EU 2023/1542' },
  audiences: { state_of_health: 'legitimate-interest', declaration_of_conformity_url: 'authority' },
  created_at: EXAMPLE_TIME,
  updated_at: EXAMPLE_TIME,
});
export const profileBody: JsonSchema = {
  type: 'object',
  required: ['profile_id', 'capability_classes'],
  properties: {
    profile_id: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' },
    description: { type: 'string' },
    capability_classes: { type: 'array', items: { enum: CAPABILITY_CLASSES }, minItems: 1 },
    default_capability_class: { enum: CAPABILITY_CLASSES },
    claims: { type: 'object', additionalProperties: true, description: 'Copied verbatim into the core of every passport created under the profile.' },
    audiences: {
      type: 'object',
      additionalProperties: true,
      description: `Config vector member → ${AUDIENCES.join(', ')}; a member not named is public. Another audience is 400 INVALID_AUDIENCE; \`type\` and \`id\` stay public.`,
    },
  },
};

const ruleSchema = closed({
  model_id: { type: 'string' },
  model_version: { type: ['integer', 'null'], description: 'Null: every version without a rule of its own.' },
  profile_id: { type: 'string' },
  created_at: dateTime,
  updated_at: dateTime,
});
export const rule = answer(ruleSchema, { model_id: 'battery-passport', model_version: null, profile_id: 'ev-battery', created_at: EXAMPLE_TIME, updated_at: EXAMPLE_TIME });
export const ruleBody: JsonSchema = {
  type: 'object',
  required: ['model_id', 'profile_id'],
  properties: {
    model_id: { type: 'string' },
    model_version: { type: 'integer', minimum: 1, description: 'Omit for every version without a rule of its own.' },
    profile_id: { type: 'string' },
  },
};

const restoreSchema = closed({
  restored_at: dateTime,
  snapshot_at: { ...dateTime, type: ['string', 'null'], description: 'The backup’s snapshot, what the logs went back to; null for a restore by other means.' },
  backup: { type: ['string', 'null'], description: 'The backup file restored.' },
  passports: { type: 'integer', minimum: 0 },
  acknowledged_at: dateTime,
  acknowledged_by: { type: 'string', description: 'The name of the admin token that acknowledged it.' },
});
export const acknowledged = answer(closed({ acknowledged: { type: 'array', items: restoreSchema } }), {
  acknowledged: [
    {
      restored_at: EXAMPLE_TIME,
      snapshot_at: EXAMPLE_TIME,
      backup: '/backups/passport-2026-11-27.backup',
      passports: 200,
      acknowledged_at: EXAMPLE_TIME,
      acknowledged_by: 'admin',
    },
  ],
});
