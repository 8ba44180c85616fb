/**
 * Shared steps of the issuer's end-to-end tests: a registry model to type passports with, passport
 * creation, event payloads, and verification of signed JSON with jose against the published keyring.
 */
import * as jose from 'jose';
import { expect } from 'vitest';
import { canonicalize } from '../../lib/crypto/jcs.js';
import type { SharedTestStack } from '../support/stack.js';

/** The JSON Schema of the test model's config vectors. */
export const BATTERY_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    chemistry: { enum: ['LFP', 'NMC', 'LTO'] },
    capacity_kwh: { type: 'number', exclusiveMinimum: 0 },
  },
  required: ['chemistry'],
  additionalProperties: false,
};

export const CONFIG_VECTOR = { chemistry: 'LFP', capacity_kwh: 75 };

let serial = 0;
/** A fresh item-level GS1 Digital Link (valid GTIN check digit, new serial). */
export const itemIdentity = () => `https://id.gs1.org/01/09520123456788/21/SN-${process.pid}-${(serial += 1)}`;

/** Creates a model record in the registry (its REST `POST /`), version 1. */
export async function createModel(platform: SharedTestStack, id: string, schema: object = BATTERY_SCHEMA): Promise<void> {
  const response = await platform.rest('registry', '/', { body: { kind: 'model', id, body: { title: id, schema } }, as: 'writer' });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
}

export async function createPassport(platform: SharedTestStack, model: string, extra: Record<string, unknown> = {}) {
  const response = await platform.rest('issuer', '/passports', {
    body: { identity: itemIdentity(), type_ref: { id: model, version: 1 }, config_vector: CONFIG_VECTOR, ...extra },
    as: 'writer',
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { passport_id: string; status: string; capability_class: string; core: any; manifest: any; log_head: any; log: unknown[] };
}

export function appendEvent(platform: SharedTestStack, passportId: string, type: string, payload: Record<string, unknown>) {
  return platform.rest('issuer', `/passports/${passportId}/events`, { body: { type, payload }, as: 'writer' });
}

let eventCounter = 0;
/** An EPCIS 2.0 ObjectEvent payload (camelCase members, as EPCIS writes them). */
export function objectEvent(bizStep = 'inspecting'): Record<string, unknown> {
  eventCounter += 1;
  return {
    eventTime: new Date(Date.UTC(2025, 0, 1, 0, 0, eventCounter)).toISOString(),
    eventTimeZoneOffset: '+01:00',
    action: 'OBSERVE',
    bizStep,
    epcList: ['https://id.gs1.org/01/09520123456788/21/SN-1'],
    readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
  };
}

/** A payload the catalogue accepts for each event type. */
export const PAYLOADS: Record<string, () => Record<string, unknown>> = {
  activated: () => ({ placed_on_market_at: '2025-02-01T00:00:00Z' }),
  suspended: () => ({ reason: 'recall investigation' }),
  reinstated: () => ({ reason: 'investigation closed' }),
  end_of_life: () => ({ reason: 'recycled' }),
  revoked: () => ({ reason: 'issued_in_error' }),
  ObjectEvent: () => objectEvent(),
  AggregationEvent: () => ({
    ...pick(objectEvent(), ['eventTime', 'eventTimeZoneOffset']),
    action: 'ADD',
    parentID: 'urn:epc:id:sscc:9520123.0000000001',
    childEPCs: ['https://id.gs1.org/01/09520123456788/21/SN-1'],
  }),
  TransactionEvent: () => ({
    ...pick(objectEvent(), ['eventTime', 'eventTimeZoneOffset', 'epcList']),
    action: 'ADD',
    bizTransactionList: [{ type: 'po', bizTransaction: 'urn:epcglobal:cbv:bt:9520123456788:PO-1' }],
  }),
  TransformationEvent: () => ({ ...pick(objectEvent(), ['eventTime', 'eventTimeZoneOffset']), inputEPCList: ['https://id.gs1.org/01/09520123456788/21/SN-1'] }),
};

function pick(value: Record<string, unknown>, members: string[]) {
  return Object.fromEntries(members.map((member) => [member, value[member]]));
}

export async function keyring(platform: SharedTestStack): Promise<(jose.JWK & { kid: string; alg: string; iat: number; exp?: number })[]> {
  const response = await platform.rest('issuer', '/keyring');
  expect(response.status).toBe(200);
  return response.body.keys;
}

/** Verifies signed JSON as an outside verifier would: jose, the JCS form, the key of its kid. */
export async function verifySignedJson(document: Record<string, unknown>, keys: (jose.JWK & { kid: string })[]) {
  const { signature, ...plain } = document;
  const [protectedHeader, detached, sig] = String(signature).split('.');
  expect(detached).toBe('');
  const header = jose.decodeProtectedHeader(String(signature));
  const jwk = keys.find((key) => key.kid === header.kid);
  if (!jwk) throw new Error(`key ${header.kid} is not in the keyring`);
  const key = await jose.importJWK(jwk, 'Ed25519');
  return jose.flattenedVerify({ protected: protectedHeader!, payload: Buffer.from(canonicalize(plain)).toString('base64url'), signature: sig! }, key);
}
