/**
 * The issuer's W3C surface (docs/INTEROP.md): each passport's UNTP credential (an enveloped vc+jwt),
 * the DID document that did:web resolves, the JSON-LD context and vocabulary the credentials name,
 * and the Bitstring Status Lists their status entries point into.
 */
import { DID_MEDIA_TYPE, JSON_LD_MEDIA_TYPE, PASSPORT_CONTEXT_PATH, PASSPORT_VOCABULARY_PATH, STATUS_LIST_LENGTH, STATUS_PURPOSES } from '../../../lib/formats/vc/index.js';
import type { Route } from '../../route-table.js';
import { passportNotFound } from '../issuer/mappers.js';
import { credentialAnswer, noSuchStatusList, sha256Tag, statusListVariables } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

function didDocumentRoute(path: string, when: string): Route {
  return {
    method: 'GET',
    path,
    summary: `The issuer’s DID document (did:web), ${when}`,
    operation: operations.DID_DOCUMENT,
    result: (data) => ({
      headers: { 'content-type': DID_MEDIA_TYPE, etag: sha256Tag(JSON.stringify(data.issuerDidDocument)), 'cache-control': 'no-cache' },
      body: data.issuerDidDocument,
    }),
    responses: {
      200: {
        description: 'The DID document: every key of the keyring not revoked, as JsonWebKey; credential keys in assertionMethod.',
        mediaType: DID_MEDIA_TYPE,
        ...schemas.didDocument,
      },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  };
}

export const credentialRoutes: Route[] = [
  {
    method: 'GET',
    path: '/passports/{id}/credential',
    summary: 'The UNTP Digital Product Passport credential of the passport at its log head (W3C VC 2.0, enveloped vc+jwt); re-issued whenever the passport changes',
    params: { id: 'The passport id.' },
    query: {
      at: {
        type: 'date-time',
        description:
          'The credential as it was at this RFC 3339 instant (Z or an offset; inclusive): made from the passport’s status and signed log head of then, as GET /passports/{id}?at= gives them. Before its creation: 404 NOT_YET_ISSUED.',
      },
    },
    operation: operations.CREDENTIAL,
    variables: ({ params, query }) => ({ id: params.id, at: query.at ?? null }),
    result: (data, context) => {
      if (!data.passport) throw passportNotFound();
      return credentialAnswer(data.passport.credential.jwt, context.request.accept);
    },
    responses: { 200: schemas.credential('The credential', true), 304: { description: 'Not modified: the passport has not changed since the ETag.' } },
  },
  didDocumentRoute('/did.json', 'where did:web finds it when the issuer’s public base URL has a path (…/issuer/did.json)'),
  didDocumentRoute('/.well-known/did.json', 'where did:web finds it when the issuer’s public base URL is an origin alone'),
  {
    method: 'GET',
    path: PASSPORT_CONTEXT_PATH,
    summary: 'The JSON-LD context v1 of the terms passport credentials add to VC 2.0 and UNTP DPP 0.6.1; never changes (a new term is a new version), and credentials carry its SHA-384',
    operation: operations.PASSPORT_CONTEXT,
    // The exact bytes, whose digest the credentials name: a verifier may keep them for good.
    result: (data) => ({
      headers: { 'content-type': JSON_LD_MEDIA_TYPE, etag: sha256Tag(data.issuerPassportContext), 'cache-control': 'public, max-age=31536000, immutable' },
      raw: Buffer.from(data.issuerPassportContext),
    }),
    responses: {
      200: { description: 'The context.', mediaType: JSON_LD_MEDIA_TYPE, ...schemas.context },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  },
  {
    method: 'GET',
    path: PASSPORT_VOCABULARY_PATH,
    summary: 'The vocabulary the context maps the platform’s terms into (RDF Schema in JSON-LD): what each term, {issuer}/vocab#{term}, means',
    operation: operations.VOCABULARY,
    result: (data) => ({
      headers: { 'content-type': JSON_LD_MEDIA_TYPE, etag: sha256Tag(JSON.stringify(data.issuerVocabulary)), 'cache-control': 'no-cache' },
      body: data.issuerVocabulary,
    }),
    responses: {
      200: { description: 'The vocabulary.', mediaType: JSON_LD_MEDIA_TYPE, ...schemas.vocabulary },
      304: { description: 'Not modified: If-None-Match names the ETag of this document.' },
    },
  },
  {
    method: 'GET',
    path: '/status-lists/{purpose}/{list}',
    summary: `A Bitstring Status List credential (W3C): ${STATUS_LIST_LENGTH} entries of one purpose; passport credentials name their entries in it`,
    params: { purpose: `${STATUS_PURPOSES.join(' or ')}.`, list: 'The list number, from 0: a passport’s status index divided by 131072.' },
    operation: operations.STATUS_LIST,
    variables: statusListVariables,
    result: (data, context) => {
      if (!data.issuerStatusList) throw noSuchStatusList();
      return credentialAnswer(data.issuerStatusList.jwt, context.request.accept);
    },
    responses: { 200: schemas.credential('The status list credential'), 304: { description: 'Not modified: no bit of the list has changed since the ETag.' } },
  },
];
