/** The JSON Schema of the Digital Link resolver's linkset, with its example. */
import type { JsonSchema } from '../../route-table.js';
import { answer } from '../../schemas.js';
import { LINK_TYPES } from './mappers.js';

const linkTarget = {
  type: 'object',
  required: ['href', 'title'],
  additionalProperties: false,
  properties: { href: { type: 'string', format: 'uri' }, title: { type: 'string' }, type: { type: 'string' } },
};
const linksetSchema: JsonSchema = {
  type: 'object',
  required: ['linkset'],
  additionalProperties: false,
  properties: {
    linkset: {
      type: 'array',
      items: {
        type: 'object',
        required: ['anchor', 'itemDescription'],
        properties: { anchor: { type: 'string', format: 'uri' }, itemDescription: { type: 'string' } },
        additionalProperties: { type: 'array', items: linkTarget, description: 'Targets of one relation type: a GS1 vocabulary URI or a registered relation name.' },
      },
    },
  },
};
const PASSPORT = 'http://127.0.0.1:3000/issuer/passports/5638f8d6-b669-41f8-8bdb-255c5ecb997e';
const LINKSET_EXAMPLE = {
  linkset: [
    {
      anchor: 'http://127.0.0.1:3000/issuer/01/09520123456788/21/SN-1',
      itemDescription: 'item of GTIN 09520123456788, serial SN-1: passport 5638f8d6-b669-41f8-8bdb-255c5ecb997e (active)',
      [LINK_TYPES.defaultLink]: [{ href: PASSPORT, title: 'Digital product passport' }],
      [LINK_TYPES.dpp]: [
        { href: PASSPORT, title: 'Digital product passport (active)', type: 'application/json' },
        { href: `${PASSPORT}/credential`, title: 'UNTP Digital Product Passport credential', type: 'application/vc+jwt' },
      ],
      [LINK_TYPES.pip]: [{ href: 'http://127.0.0.1:3000/verify/', title: 'Verification page: scan the passport’s QR code', type: 'text/html' }],
      [LINK_TYPES.archives]: [
        { href: 'http://127.0.0.1:3000/archive/snapshots?passport_id=5638f8d6-b669-41f8-8bdb-255c5ecb997e', title: 'Archive snapshots of the passport', type: 'application/json' },
      ],
    },
  ],
};

export const linkset = answer(linksetSchema, LINKSET_EXAMPLE);
