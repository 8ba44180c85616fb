import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { EVENT_CATALOGUE, validateEventPayload } from '../../../lib/formats/issuer/catalogue.js';
import { IssuerError } from '../../../lib/formats/issuer/errors.js';

const epc = 'https://id.gs1.org/01/09520123456788/21/SN-42';
const when = { eventTime: '2025-03-01T09:00:00Z', eventTimeZoneOffset: '+01:00' };

const VALID: Record<string, unknown[]> = {
  activated: [{}, { placed_on_market_at: '2025-03-01T09:00:00Z', note: 'launch' }],
  suspended: [{ reason: 'recall R-17' }],
  reinstated: [{ reason: 'recall closed' }],
  end_of_life: [{ reason: 'recycled', effective_at: '2030-01-01T00:00:00Z' }],
  revoked: [{ reason: 'issued_in_error' }, { reason: 'superseded', superseded_by: 'passport-2' }],
  ObjectEvent: [
    { ...when, action: 'ADD', bizStep: 'commissioning', disposition: 'active', epcList: [epc] },
    { ...when, action: 'OBSERVE', bizStep: 'inspecting', disposition: 'conformant', quantityList: [{ epcClass: epc, quantity: 2, uom: 'KGM' }] },
    { ...when, action: 'OBSERVE', bizStep: 'repairing', epcList: [epc], readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' }, 'ex:torque': 12 },
  ],
  AggregationEvent: [
    { ...when, action: 'ADD', bizStep: 'packing', parentID: 'urn:epc:id:sscc:9520123.0000000001', childEPCs: [epc] },
    { ...when, action: 'OBSERVE', childEPCs: [epc] },
  ],
  TransactionEvent: [
    {
      ...when,
      action: 'ADD',
      bizStep: 'shipping',
      disposition: 'in_transit',
      epcList: [epc],
      bizTransactionList: [{ type: 'po', bizTransaction: 'urn:epcglobal:cbv:bt:9520123456788:PO-1' }],
      sourceList: [{ type: 'owning_party', source: 'urn:epc:id:pgln:9520123.00000' }],
      destinationList: [{ type: 'owning_party', destination: 'urn:epc:id:pgln:9520999.00000' }],
    },
  ],
  TransformationEvent: [{ ...when, bizStep: 'recycling', inputEPCList: [epc], outputQuantityList: [{ epcClass: 'urn:epc:class:lgtin:9520123.011111.B7', quantity: 1.5, uom: 'KGM' }] }],
};

const INVALID: [string, unknown, string][] = [
  ['suspended', {}, '/reason'],
  ['end_of_life', { reason: 'melted' }, '/reason'],
  ['activated', { colour: 'red' }, '/colour'],
  ['ObjectEvent', { ...when, action: 'ADD' }, ''],
  ['ObjectEvent', { ...when, action: 'SHOUT', epcList: [epc] }, '/action'],
  ['ObjectEvent', { eventTime: 'yesterday', eventTimeZoneOffset: '+01:00', action: 'ADD', epcList: [epc] }, '/eventTime'],
  ['ObjectEvent', { ...when, action: 'ADD', bizStep: 'teleporting', epcList: [epc] }, '/bizStep'],
  ['ObjectEvent', { ...when, action: 'ADD', epcList: [epc], unnamespaced: 1 }, '/unnamespaced'],
  ['AggregationEvent', { ...when, action: 'ADD', childEPCs: [epc] }, '/parentID'],
  ['TransactionEvent', { ...when, action: 'ADD', epcList: [epc] }, '/bizTransactionList'],
  ['TransformationEvent', { ...when, bizStep: 'recycling' }, ''],
  ['TransformationEvent', { ...when, inputEPCList: [epc], action: 'ADD' }, '/action'],
];

describe('event catalogue', () => {
  it('lists every type once, with a category, a description and a schema', () => {
    expect(new Set(EVENT_CATALOGUE.map((entry) => entry.type)).size).toBe(EVENT_CATALOGUE.length);
    expect(Object.keys(VALID).sort()).toEqual(EVENT_CATALOGUE.map((entry) => entry.type).sort());
    for (const entry of EVENT_CATALOGUE) {
      expect(entry.category).toBe(/^[A-Z]/.test(entry.type) ? 'traceability' : 'lifecycle');
      expect(entry.description.length).toBeGreaterThan(10);
      expect(entry.payload_schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });

  it('serves schemas that a separate strict 2020-12 validator accepts, and that survive JSON', () => {
    const independent = new Ajv2020({ strict: true, validateSchema: true });
    formats.default(independent);
    for (const entry of EVENT_CATALOGUE) {
      const served = JSON.parse(JSON.stringify(entry.payload_schema));
      expect(independent.validateSchema(served), entry.type).toBe(true);
      const validate = independent.compile(served);
      for (const payload of VALID[entry.type]!) expect(validate(payload), `${entry.type} ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('accepts the example payloads', () => {
    for (const [type, payloads] of Object.entries(VALID)) for (const payload of payloads) expect(() => validateEventPayload(type, payload)).not.toThrow();
  });

  it.each(INVALID)('refuses a bad %s payload, pointing at %#', (type, payload, pointer) => {
    let thrown: unknown;
    try {
      validateEventPayload(type, payload);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IssuerError);
    const error = thrown as IssuerError<'INVALID_EVENT_PAYLOAD'>;
    expect(error.code).toBe('INVALID_EVENT_PAYLOAD');
    expect(error.details.violations.map((violation) => violation.pointer)).toContain(pointer);
  });

  it('refuses unknown types and non-object payloads', () => {
    expect(() => validateEventPayload('Teleport', {})).toThrowError(expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE' }));
    expect(() => validateEventPayload('activated', [])).toThrowError(expect.objectContaining({ code: 'INVALID_EVENT_PAYLOAD' }));
  });
});
