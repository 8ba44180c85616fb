/**
 * The gateway's trusted documents (lib/graphql/trusted-documents.ts): a request may name its
 * document by id, as `documentId` (`sha256:<hex>` or the bare hex, Hive's and the GraphQL over HTTP
 * draft's form) or as Apollo's `extensions.persistedQuery.sha256Hash` (Cosmo's), in a POST body or a
 * GET's query string; the document is then run from the manifests. In trusted-documents mode
 * (TRUSTED_DOCUMENTS) only such requests are run: one with a document's text is refused 400
 * `PERSISTED_QUERY_ID_REQUIRED`, one naming an unknown id 400 `PERSISTED_QUERY_NOT_IN_LIST` (Apollo
 * Router's codes for its safelist). Without it, any document runs, as Apollo's automatic persisted
 * queries too (an unknown sha256Hash is theirs to answer).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConfigurationError, type TrustedDocumentsSetting } from '../lib/config/runtime.js';
import { PLATFORM_DOCUMENTS_FILE, readManifest } from '../lib/graphql/trusted-documents.js';
import { sendGraphqlRefusal } from '../lib/http/graphql-refusals.js';

type Params = Record<string, unknown>;

/** The id a request names its document by, if any, and whether it is APQ's form. */
function namedId(params: Params): { id: string; persistedQuery: boolean } | undefined {
  if (typeof params.documentId === 'string') return { id: params.documentId.replace(/^sha256:/, '').toLowerCase(), persistedQuery: false };
  const { extensions } = params;
  const hash = extensions && typeof extensions === 'object' ? (extensions as { persistedQuery?: { sha256Hash?: unknown } }).persistedQuery?.sha256Hash : undefined;
  return typeof hash === 'string' ? { id: hash.toLowerCase(), persistedQuery: true } : undefined;
}

/** The request's parameters with the named document in place of the id: what Apollo Server runs. */
function withDocument(params: Params, document: string): Params {
  const { documentId: _id, extensions, ...rest } = params;
  const { persistedQuery: _persisted, ...otherExtensions } = (extensions ?? {}) as Params;
  return { ...rest, query: document, ...(Object.keys(otherExtensions).length ? { extensions: otherExtensions } : {}) };
}

/** A GET's parameters as Apollo reads them: `variables` and `extensions` are JSON in the query string. */
function getParams(search: URLSearchParams): Params {
  const params: Params = Object.fromEntries(search);
  try {
    if (typeof params.extensions === 'string') params.extensions = JSON.parse(params.extensions);
  } catch {
    // Apollo Server answers malformed extensions itself.
  }
  return params;
}

/** Why a request's document may not run: its status, code and message. */
export interface DocumentRefusal {
  status: 400;
  code: 'PERSISTED_QUERY_ID_REQUIRED' | 'PERSISTED_QUERY_NOT_IN_LIST';
  message: string;
}

/**
 * The parameters of a GraphQL request (an HTTP request's, or a graphql-ws subscribe message's
 * payload) with their named document in place of its id, unchanged when they name none (or an
 * automatic persisted query outside trusted-documents mode), or the refusal.
 */
export type DocumentLookup = (params: Params) => { params: Params } | { refusal: DocumentRefusal };

/** The manifests of TRUSTED_DOCUMENTS, read once at start, as the lookup every transport uses. */
export function trustedDocumentsLookup(setting: TrustedDocumentsSetting): DocumentLookup {
  const documents = readManifest(PLATFORM_DOCUMENTS_FILE);
  for (const file of setting.files) {
    let manifest: Map<string, string>;
    try {
      manifest = readManifest(file);
    } catch (error) {
      throw new ConfigurationError(`TRUSTED_DOCUMENTS names ${file}, which cannot be used: ${(error as Error).message}`);
    }
    for (const [id, document] of manifest) documents.set(id, document);
  }
  return (params) => {
    const named = namedId(params);
    if (!named) {
      if (!setting.only) return { params };
      return {
        refusal: {
          status: 400,
          code: 'PERSISTED_QUERY_ID_REQUIRED',
          message: 'This gateway runs registered documents only (TRUSTED_DOCUMENTS): name the document by its documentId or extensions.persistedQuery.sha256Hash.',
        },
      };
    }
    const document = documents.get(named.id);
    if (document) return { params: withDocument(params, document) };
    // Without trusted-documents mode, an automatic persisted query's unknown hash is Apollo's to answer.
    if (!setting.only && named.persistedQuery) return { params };
    return { refusal: { status: 400, code: 'PERSISTED_QUERY_NOT_IN_LIST', message: `No registered document has the id ${named.id}.` } };
  };
}

/**
 * Resolves a /graphql request's document id before Apollo Server reads it (the body, or a GET's URL
 * rewritten); answers the refusal and returns true when it may not run.
 */
export function trustedDocumentsResolver(lookup: DocumentLookup): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    const get = request.method === 'GET';
    const [path, search = ''] = request.url.split('?') as [string, string?];
    const body = request.body;
    const params = get ? getParams(new URLSearchParams(search)) : body && typeof body === 'object' && !Array.isArray(body) ? (body as Params) : {};
    const looked = lookup(params);
    if ('refusal' in looked) {
      sendGraphqlRefusal(reply, looked.refusal.status, looked.refusal.code, looked.refusal.message);
      return true;
    }
    if (looked.params === params) return false;
    if (!get) request.body = looked.params;
    else {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(looked.params)) query.set(name, typeof value === 'string' ? value : JSON.stringify(value));
      request.raw.url = `${path}?${query}`;
    }
    return false;
  };
}
