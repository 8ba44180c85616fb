/**
 * The event catalogue: every event type a passport log accepts, with a JSON Schema (2020-12) for
 * its payload.
 *
 * Traceability events are the four EPCIS 2.0 event classes (GS1 EPCIS 2.0 §7.4, as UNTP Digital
 * Traceability Events also use them). Their payloads keep the EPCIS 2.0 JSON binding's member
 * names (`eventTime`, `bizStep`, `epcList`…) so that an EPCIS document maps onto them one to one;
 * the event class is the event's `type`, not a payload member. Business steps and dispositions are
 * the CBV 2.0 bare words, plus two circular-economy steps CBV lacks (`recycling`,
 * `remanufacturing`). Extension members are allowed only as namespaced names (`prefix:name`), as
 * in EPCIS JSON-LD.
 *
 * Lifecycle events change the passport status (see status.ts); their payloads are this service's
 * own and use snake_case like the rest of its JSON.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { IssuerError, type SchemaViolation } from './errors.js';

export const TRACEABILITY_EVENT_TYPES = ['ObjectEvent', 'AggregationEvent', 'TransactionEvent', 'TransformationEvent'] as const;
export const LIFECYCLE_EVENT_TYPES = ['activated', 'suspended', 'reinstated', 'end_of_life', 'revoked'] as const;
export const EVENT_TYPES = [...LIFECYCLE_EVENT_TYPES, ...TRACEABILITY_EVENT_TYPES] as const;

export type TraceabilityEventType = (typeof TRACEABILITY_EVENT_TYPES)[number];
export type LifecycleEventType = (typeof LIFECYCLE_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];
export type EventCategory = 'traceability' | 'lifecycle';

export type JsonSchema = { readonly [keyword: string]: unknown };

export interface EventTypeDescriptor {
  type: EventType;
  category: EventCategory;
  description: string;
  /** The standard the type follows. */
  reference: string;
  payload_schema: JsonSchema;
}

/** CBV 2.0 business steps (GS1 CBV 2.0 §8.2), plus the two circular-economy extensions. */
export const BUSINESS_STEPS = [
  'accepting',
  'arriving',
  'assembling',
  'collecting',
  'commissioning',
  'consigning',
  'creating_class_instance',
  'cycle_counting',
  'decommissioning',
  'departing',
  'destroying',
  'disassembling',
  'dispensing',
  'encoding',
  'entering_exiting',
  'holding',
  'inspecting',
  'installing',
  'killing',
  'loading',
  'other',
  'packing',
  'picking',
  'receiving',
  'removing',
  'repackaging',
  'repairing',
  'replacing',
  'reserving',
  'retail_selling',
  'sampling',
  'sensor_reporting',
  'shipping',
  'staging_outgoing',
  'stock_taking',
  'stocking',
  'storing',
  'transporting',
  'unloading',
  'unpacking',
  'void_shipping',
  'recycling',
  'remanufacturing',
] as const;

/** CBV 2.0 dispositions (GS1 CBV 2.0 §8.3). */
export const DISPOSITIONS = [
  'active',
  'available',
  'completeness_inferred',
  'completeness_verified',
  'conformant',
  'container_closed',
  'container_open',
  'damaged',
  'destroyed',
  'dispensed',
  'disposed',
  'encoded',
  'expired',
  'in_progress',
  'in_transit',
  'inactive',
  'mismatch_class',
  'mismatch_instance',
  'mismatch_quantity',
  'needs_replacement',
  'no_pedigree_match',
  'non_conformant',
  'non_sellable_other',
  'partially_dispensed',
  'recalled',
  'reserved',
  'retail_sold',
  'returned',
  'sellable_accessible',
  'sellable_not_accessible',
  'stolen',
  'unavailable',
  'unknown',
] as const;

const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const uri = { type: 'string', format: 'uri' } as const;
const uriList = { type: 'array', items: uri, minItems: 1 } as const;
const quantityList = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    properties: {
      epcClass: uri,
      quantity: { type: 'number', exclusiveMinimum: 0 },
      // UN/CEFACT Recommendation 20 unit code.
      uom: { type: 'string', pattern: '^[A-Z0-9]{2,3}$' },
    },
    required: ['epcClass'],
    additionalProperties: false,
  },
} as const;
const typedReferenceList = (member: string) =>
  ({
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      properties: { type: { type: 'string', minLength: 1 }, [member]: uri },
      required: [member],
      additionalProperties: false,
    },
  }) as const;
const place = { type: 'object', properties: { id: uri }, required: ['id'], additionalProperties: false } as const;
/** EPCIS JSON-LD extension members: a namespace prefix, a colon, a local name. */
const EXTENSION_MEMBERS = { '^[A-Za-z][A-Za-z0-9_-]*:[A-Za-z0-9_.-]+$': {} } as const;
const action = { enum: ['ADD', 'OBSERVE', 'DELETE'] } as const;
/** At least one of the members; each branch names its member so that Ajv's strictRequired holds. */
const atLeastOneOf = (...members: string[]) => members.map((member) => ({ properties: { [member]: true }, required: [member] }));

/** The "what, when, where, why" members every EPCIS event class shares (EPCIS 2.0 §7.4.1). */
const epcisCommon = {
  eventID: uri,
  eventTime: { type: 'string', format: 'date-time' },
  eventTimeZoneOffset: { type: 'string', pattern: '^[+-](?:0\\d|1[0-4]):[0-5]\\d$' },
  bizStep: { enum: BUSINESS_STEPS },
  disposition: { enum: DISPOSITIONS },
  readPoint: place,
  bizLocation: place,
  bizTransactionList: typedReferenceList('bizTransaction'),
  sourceList: typedReferenceList('source'),
  destinationList: typedReferenceList('destination'),
} as const;

function traceabilitySchema(type: TraceabilityEventType, what: Record<string, unknown>, rules: Record<string, unknown>): JsonSchema {
  return {
    $schema: SCHEMA_DIALECT,
    $id: `urn:passport-issuer:event-payload:${type}`,
    title: `${type} payload`,
    type: 'object',
    properties: { ...epcisCommon, ...what },
    required: ['eventTime', 'eventTimeZoneOffset', ...((rules.required as string[] | undefined) ?? [])],
    ...Object.fromEntries(Object.entries(rules).filter(([keyword]) => keyword !== 'required')),
    patternProperties: EXTENSION_MEMBERS,
    additionalProperties: false,
  };
}

function lifecycleSchema(type: LifecycleEventType, properties: Record<string, unknown>, required: string[]): JsonSchema {
  return {
    $schema: SCHEMA_DIALECT,
    $id: `urn:passport-issuer:event-payload:${type}`,
    title: `${type} payload`,
    type: 'object',
    properties: { ...properties, note: { type: 'string', maxLength: 2000 } },
    required,
    additionalProperties: false,
  };
}

const reason = { type: 'string', minLength: 1, maxLength: 500 } as const;
const instant = { type: 'string', format: 'date-time' } as const;

export const EVENT_CATALOGUE: readonly EventTypeDescriptor[] = Object.freeze([
  {
    type: 'activated',
    category: 'lifecycle',
    description: 'The passport comes into force: the product is placed on the market or put into service.',
    reference: 'lifecycle event of this service',
    payload_schema: lifecycleSchema('activated', { placed_on_market_at: instant }, []),
  },
  {
    type: 'suspended',
    category: 'lifecycle',
    description: 'The passport is temporarily not in force, e.g. during a recall or an investigation.',
    reference: 'lifecycle event of this service',
    payload_schema: lifecycleSchema('suspended', { reason }, ['reason']),
  },
  {
    type: 'reinstated',
    category: 'lifecycle',
    description: 'A suspended passport is in force again.',
    reference: 'lifecycle event of this service',
    payload_schema: lifecycleSchema('reinstated', { reason }, ['reason']),
  },
  {
    type: 'end_of_life',
    category: 'lifecycle',
    description: 'The product has reached the end of its life. Traceability events (recycling, dismantling) may still follow.',
    reference: 'lifecycle event of this service',
    payload_schema: lifecycleSchema('end_of_life', { reason: { enum: ['recycled', 'dismantled', 'destroyed', 'lost', 'exported', 'other'] }, effective_at: instant }, ['reason']),
  },
  {
    type: 'revoked',
    category: 'lifecycle',
    description: 'The passport itself is void (issued in error, fraudulent, superseded). Nothing more may be appended.',
    reference: 'lifecycle event of this service',
    payload_schema: lifecycleSchema(
      'revoked',
      {
        reason: { enum: ['issued_in_error', 'fraudulent', 'superseded', 'withdrawn', 'other'] },
        superseded_by: { type: 'string', minLength: 1 },
      },
      ['reason'],
    ),
  },
  {
    type: 'ObjectEvent',
    category: 'traceability',
    description: 'Something happened to objects: commissioned, inspected, shipped, received, repaired, recycled.',
    reference: 'GS1 EPCIS 2.0 §7.4.2 ObjectEvent; UNTP Digital Traceability Event',
    payload_schema: traceabilitySchema('ObjectEvent', { action, epcList: uriList, quantityList }, { required: ['action'], anyOf: atLeastOneOf('epcList', 'quantityList') }),
  },
  {
    type: 'AggregationEvent',
    category: 'traceability',
    description: 'Objects were packed into or unpacked from a parent (a case, a pallet, an assembly).',
    reference: 'GS1 EPCIS 2.0 §7.4.3 AggregationEvent; UNTP Digital Traceability Event',
    payload_schema: traceabilitySchema(
      'AggregationEvent',
      { action, parentID: uri, childEPCs: uriList, childQuantityList: quantityList },
      {
        required: ['action'],
        // EPCIS 2.0: parentID is required unless the action is OBSERVE.
        if: { properties: { action: { enum: ['ADD', 'DELETE'] } } },
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
        then: { properties: { parentID: true }, required: ['parentID'] },
      },
    ),
  },
  {
    type: 'TransactionEvent',
    category: 'traceability',
    description: 'Objects were tied to or released from a business transaction (an order, an invoice, a despatch advice).',
    reference: 'GS1 EPCIS 2.0 §7.4.4 TransactionEvent; UNTP Digital Traceability Event',
    payload_schema: traceabilitySchema(
      'TransactionEvent',
      { action, parentID: uri, epcList: uriList, quantityList },
      { required: ['action', 'bizTransactionList'], anyOf: atLeastOneOf('epcList', 'quantityList') },
    ),
  },
  {
    type: 'TransformationEvent',
    category: 'traceability',
    description: 'Inputs were consumed and outputs produced: manufacturing, remanufacturing, recycling into material.',
    reference: 'GS1 EPCIS 2.0 §7.4.6 TransformationEvent; UNTP Digital Traceability Event',
    payload_schema: traceabilitySchema(
      'TransformationEvent',
      {
        transformationID: uri,
        inputEPCList: uriList,
        inputQuantityList: quantityList,
        outputEPCList: uriList,
        outputQuantityList: quantityList,
      },
      {
        anyOf: atLeastOneOf('inputEPCList', 'inputQuantityList', 'outputEPCList', 'outputQuantityList'),
      },
    ),
  },
] satisfies EventTypeDescriptor[]);

// Each type's schema is compiled at its first payload, once per process: compiling them all at load took
// every process that loads this module (a start, a facade, each verifier run) ~0.8 s of CPU, for types most
// of them never see. A schema error is a programming error: test/issuer/domain/catalogue.test.ts
// compiles every type's with this validator.
const ajv = new Ajv2020({ strict: true, allErrors: true });
formats.default(ajv);
const validators = new Map<EventType, ValidateFunction>();

function validatorOf(type: EventType): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    validate = ajv.compile(EVENT_CATALOGUE.find((descriptor) => descriptor.type === type)!.payload_schema);
    validators.set(type, validate);
  }
  return validate;
}

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

/** Checks a payload against its type's schema; throws UNKNOWN_EVENT_TYPE or INVALID_EVENT_PAYLOAD. */
export function validateEventPayload(type: string, payload: unknown): asserts type is EventType {
  const validate = isEventType(type) ? validatorOf(type) : undefined;
  if (!validate) throw new IssuerError('UNKNOWN_EVENT_TYPE', `unknown event type "${type}"`, { event: type });
  if (!validate(payload)) {
    const violations = (validate.errors ?? []).map(toViolation);
    throw new IssuerError('INVALID_EVENT_PAYLOAD', `the ${type} payload does not match its schema: ${violations.map((v) => `${v.pointer || '/'} ${v.message}`).join('; ')}`, {
      event: type,
      violations,
    });
  }
}

function toViolation(error: ErrorObject): SchemaViolation {
  // Name the offending member itself for "required" and "additionalProperties" errors.
  const member =
    error.keyword === 'required'
      ? (error.params as { missingProperty: string }).missingProperty
      : error.keyword === 'additionalProperties'
        ? (error.params as { additionalProperty: string }).additionalProperty
        : undefined;
  const pointer = member === undefined ? error.instancePath : `${error.instancePath}/${member.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return { pointer, message: error.message ?? error.keyword };
}
