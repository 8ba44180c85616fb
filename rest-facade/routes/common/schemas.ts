/** The JSON Schemas of the answers every service has, each with its example. */
import { SERVICES, type ServiceName } from '../../../lib/config/services.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_ED25519_JWK, EXAMPLE_SIGNATURE, EXAMPLE_TIME, keyRevocation, page, publicJwk, signed, thumbprint, uri } from '../../schemas.js';

export const health = (status: 'ok' | 'unavailable') =>
  answer(
    signed(
      {
        service: { enum: SERVICES },
        status: { const: status },
        database: { const: status === 'ok' ? 'ok' : 'unreachable' },
        version: { type: 'string' },
        checked_at: dateTime,
      },
      {},
      'Signed JSON by the service key (GET /keyring, or the discovery document where there is no keyring path).',
    ),
    { service: 'trust', status, database: status === 'ok' ? 'ok' : 'unreachable', version: '0.1.0', checked_at: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE },
  );

export const keyringKey: JsonSchema = {
  ...publicJwk,
  required: ['kty', 'crv', 'x', 'kid', 'alg', 'use', 'purpose', 'signs', 'iat'],
  properties: {
    ...(publicJwk.properties as Record<string, JsonSchema>),
    kid: thumbprint,
    alg: { enum: ['Ed25519', 'ES256'] },
    use: { const: 'sig' },
    purpose: {
      enum: ['service', 'event', 'carrier', 'credential', 'notary'],
      description:
        'What the key is for (docs/KEYS.md): a service key signs health (and, at the trust service, anchor bundles); event signs events and log heads; carrier signs Tier-A packs; credential signs the issuer’s verifiable credentials (UNTP passports, status lists); notary signs notarizations.',
    },
    signs: { type: 'array', items: { type: 'string' }, description: 'The artefacts the key signs, in words.' },
    operator: { type: 'string', description: 'The operator whose passports the key signs (its trust node is operator:<id>, docs/OPERATORS.md); absent for the platform’s own keys.' },
    iat: { type: 'integer', description: 'NumericDate the key was made.' },
    exp: { type: 'integer', description: 'NumericDate, set once the key is retired; it still verifies what it signed.' },
    revoked: keyRevocation,
  },
  additionalProperties: false,
};

export const jwkSet = answer(closed({ keys: { type: 'array', items: keyringKey } }), {
  keys: [{ ...EXAMPLE_ED25519_JWK, alg: 'Ed25519', use: 'sig', purpose: 'service', signs: ['health'], iat: 1795587590 }],
});

const endpoint = closed(
  { method: { enum: ['GET', 'POST'] }, path: { type: 'string' }, href: { type: 'string', description: 'The path under this base URL; may hold {name} parameters.' }, summary: { type: 'string' } },
  { role: { enum: ['writer', 'admin'] } },
);

/** The members every discovery document has; each service adds its own (see docs/<service>.md). */
export const discovery = (service: ServiceName, keyring: boolean) =>
  answer(
    {
      type: 'object',
      required: ['service', 'description', 'base_url', 'openapi', 'endpoints', ...(keyring ? [] : ['keyring'])],
      properties: {
        service: { const: service },
        description: { type: 'string' },
        base_url: uri,
        openapi: { ...uri, description: "This service's OpenAPI document." },
        endpoints: { type: 'array', items: endpoint },
        ...(keyring ? {} : { keyring: jwkSet.schema }),
      },
      additionalProperties: true,
    },
    {
      service,
      description: `The ${service} service.`,
      base_url: `http://127.0.0.1:8080/${service}`,
      openapi: `http://127.0.0.1:8080/docs/${service}/openapi.json`,
      endpoints: [{ method: 'GET', path: '/healthz', href: `http://127.0.0.1:8080/${service}/healthz`, summary: 'Liveness as signed JSON' }],
      ...(keyring ? {} : { keyring: jwkSet.example }),
    },
  );

export const adminLogPage = answer(
  page(
    'entries',
    closed({
      id: { type: 'string' },
      at: dateTime,
      actor: { type: 'string', description: 'Name of the token that made the request.' },
      role: { type: 'string' },
      operator: { type: ['string', 'null'], description: 'The operator the actor acted for; null for the platform itself or an anonymous caller. An operator’s admin reads only its own entries.' },
      action: { type: 'string', description: 'The operation, e.g. appendPassportEvent.' },
      target: { type: ['string', 'null'], description: 'The record the request named.' },
      outcome: { type: 'string', description: '`ok`, or the problem code the request ended with.' },
      detail: { type: ['object', 'null'], additionalProperties: true, description: "What the operation said, e.g. a refusal's status and detail; null when there is nothing to add." },
    }),
  ),
  {
    entries: [
      {
        id: '6',
        at: EXAMPLE_TIME,
        actor: 'ops',
        role: 'writer',
        operator: 'default',
        action: 'upsertTrustNode',
        target: 'acme',
        outcome: 'NODE_CONFLICT',
        detail: { status: 409, detail: 'node acme is a issuer; its kind does not change' },
      },
    ],
    next: '6',
  },
);
