/** The operators the platform serves (docs/OPERATORS.md), on the issuer: created, listed, read and suspended by the platform admin; each one's DID document. */
import { DID_MEDIA_TYPE } from '../../../lib/formats/vc/index.js';
import type { Route } from '../../route-table.js';
import { location } from '../../schemas.js';
import { sha256Tag } from '../credentials/mappers.js';
import { didDocument } from '../credentials/schemas.js';
import { creationAnswer, creationVariables, operatorNotFound } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

const operatorIdParam = { id: 'The operator id.' };

export const operatorRoutes: Route[] = [
  {
    method: 'POST',
    path: '/operators',
    summary:
      'Creates an operator (platform admin): its event, carrier and credential keys, and its trust node operator:<id> delegated from the platform node; for an operator that exists, completes what a failed creation left undone (200)',
    role: 'admin',
    body: schemas.operatorBody,
    operation: operations.CREATE_OPERATOR,
    variables: creationVariables,
    result: (data, context) => creationAnswer(data.creation, context),
    responses: {
      201: { headers: location('The operator.'), description: 'The operator, created, with its keys.', ...schemas.operator },
      200: { description: 'The operator, which existed: its keys and delegation are in place.', ...schemas.operator },
    },
    problems: [401, 403, 409, 502],
  },
  {
    method: 'GET',
    path: '/operators',
    summary: 'Every operator, by id (platform admin)',
    role: 'admin',
    operation: operations.OPERATORS,
    result: (data) => ({ body: { operators: data.operators } }),
    responses: { 200: { description: 'The operators.', ...schemas.operators } },
    problems: [401, 403],
  },
  {
    method: 'GET',
    path: '/operators/{id}',
    summary: 'One operator: name, status, did:web and keys (platform admin, or that operator’s admin)',
    role: 'admin',
    params: operatorIdParam,
    operation: operations.OPERATOR,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => {
      if (!data.operator) throw operatorNotFound();
      return { body: data.operator };
    },
    responses: { 200: { description: 'The operator.', ...schemas.operator } },
    problems: [401, 403],
  },
  {
    method: 'POST',
    path: '/operators/{id}/suspension',
    summary:
      'Suspends an operator (platform admin): its writes are refused from now, and its trust node is revoked from now, so what it signed before stays verifiable; suspending again changes nothing',
    role: 'admin',
    params: operatorIdParam,
    operation: operations.SUSPEND_OPERATOR,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => {
      if (!data.operator) throw operatorNotFound();
      return { body: data.operator };
    },
    responses: { 200: { description: 'The operator, suspended.', ...schemas.operator } },
    problems: [401, 403, 409],
  },
  {
    method: 'GET',
    path: '/operators/{id}/did.json',
    summary: 'An operator’s DID document: did:web of {issuer}/operators/{id}, the issuer its passports’ credentials name (the default operator’s is the issuer’s own, /did.json)',
    params: operatorIdParam,
    operation: operations.OPERATOR_DID_DOCUMENT,
    variables: ({ params }) => ({ operator: params.id }),
    result: (data) => {
      if (!data.issuerDidDocument) throw operatorNotFound();
      return { headers: { 'content-type': DID_MEDIA_TYPE, etag: sha256Tag(JSON.stringify(data.issuerDidDocument)), 'cache-control': 'no-cache' }, body: data.issuerDidDocument };
    },
    responses: {
      200: { description: 'The DID document: every key of the operator not revoked, as JsonWebKey; credential keys in assertionMethod.', mediaType: DID_MEDIA_TYPE, ...didDocument },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  },
];
