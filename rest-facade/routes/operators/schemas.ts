/** The JSON Schemas of the operator routes' bodies and answers, each answer with its example. */
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_ED25519_JWK, nullableDateTime } from '../../schemas.js';
import { keyringKey } from '../common/schemas.js';

export const operatorBody: JsonSchema = closed(
  {
    id: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$', description: 'A lowercase slug: its trust node is operator:<id>, its did:web ends in :operators:<id>.' },
    name: { type: 'string', minLength: 1, maxLength: 200 },
  },
  {},
  'The operator to create; the same body again completes a creation that failed halfway.',
);

const operatorSchema = closed(
  {
    id: { type: 'string' },
    name: { type: 'string' },
    status: { enum: ['active', 'suspended'], description: 'suspended: its writes are refused, and its trust node is revoked from suspended_at.' },
    created_at: dateTime,
    suspended_at: nullableDateTime,
    did: { type: 'string', pattern: '^did:web:', description: 'Its did:web: the issuer its passports’ credentials name.' },
    keys: { type: 'array', items: keyringKey, description: 'Its keys (event, carrier, credential) as the issuer keyring publishes them.' },
  },
  {},
  'An operator: it writes and signs only its own passports, with its own keys.',
);

const EXAMPLE_OPERATOR = {
  id: 'acme',
  name: 'ACME Batteries',
  status: 'active',
  created_at: '2026-12-06T09:00:00.000Z',
  suspended_at: null,
  did: 'did:web:dpp.example.com:issuer:operators:acme',
  keys: [{ ...EXAMPLE_ED25519_JWK, alg: 'Ed25519', use: 'sig', purpose: 'event', signs: ['events', 'log heads'], operator: 'acme', iat: 1795587590 }],
};

export const operator = answer(operatorSchema, EXAMPLE_OPERATOR);
export const operators = answer(closed({ operators: { type: 'array', items: operatorSchema } }), { operators: [EXAMPLE_OPERATOR] });
