/** The JSON Schemas of the token routes' bodies and answers, each answer with its example. */
import { ROLES } from '../../../lib/auth/tokens.js';
import type { JsonSchema } from '../../route-table.js';
import { answer, closed, dateTime, EXAMPLE_TIME, nullableDateTime } from '../../schemas.js';

const operator: JsonSchema = { type: ['string', 'null'], description: 'The operator the token acts for; null: the platform itself.' };
const role: JsonSchema = { enum: [...ROLES] };

export const tokenBody = closed(
  { role, label: { type: 'string', minLength: 1, maxLength: 200, description: 'What the token is for.' } },
  {
    operator: { type: 'string', description: "The operator the token is for; absent: the caller's own (the platform's, for the platform admin). Only the platform admin names another." },
    expires_at: { ...dateTime, description: 'When it stops working (RFC 3339, in the future); absent: never, until revoked.' },
  },
);

const tokenSchema = closed(
  {
    id: { type: 'string', description: 'The token’s id: what lists, revocations and the admin log name it by.' },
    operator,
    role,
    label: { type: 'string' },
    created_at: dateTime,
    expires_at: nullableDateTime,
    revoked_at: nullableDateTime,
    created_by: { type: 'string', description: 'The credential that created it: a token id, a configured token’s name, or a JWT subject.' },
  },
  {},
  'An issued API token, without its secret (only its SHA-256 is kept).',
);

const EXAMPLE_TOKEN = {
  id: '3f9c1a7e52b04d18',
  operator: 'acme-batteries',
  role: 'writer',
  label: 'line 3 scanner',
  created_at: EXAMPLE_TIME,
  expires_at: null,
  revoked_at: null,
  created_by: 'admin',
};

export const created = answer(
  closed({ ...(tokenSchema.properties as Record<string, JsonSchema>), secret: { type: 'string', pattern: '^dpp_[A-Za-z0-9_-]{43}$', description: 'The bearer token, shown this once.' } }),
  { ...EXAMPLE_TOKEN, secret: 'dpp_q2VYq3n0Q8o7Qb1jm0cY5m6v6qQ0i1y7Wq3m8b9c0dE' },
);

export const tokens = answer(closed({ tokens: { type: 'array', items: tokenSchema } }), { tokens: [EXAMPLE_TOKEN] });

export const token = answer(tokenSchema, { ...EXAMPLE_TOKEN, revoked_at: EXAMPLE_TIME });
