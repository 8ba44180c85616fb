/** How the issuer's credentials and documents are answered: negotiated representations, entity tags. */
import { createHash } from 'node:crypto';
import Negotiator from 'negotiator';
import { envelope, securedMediaType, VC_JWT_MEDIA_TYPE, VC_MEDIA_TYPE } from '../../../lib/formats/vc/index.js';
import { RequestProblem } from '../../../lib/http/request-problem.js';
import { problem } from '../../../lib/problem.js';
import type { RouteRequest, RouteResult } from '../../route-table.js';

/** The representations of a credential, most preferred first: the vc+jwt itself, or its envelope as JSON. */
const CREDENTIAL_MEDIA_TYPES = [VC_JWT_MEDIA_TYPE, VC_MEDIA_TYPE, 'application/json'] as const;

/**
 * The representation an Accept header prefers (RFC 9110 §12.5.1, by negotiator, as the Digital Link
 * resolver negotiates; ties go to the order above), `raw` (vc+jwt, or vc+sd-jwt for a credential
 * with restricted members) standing first. An Accept that names none of them gets the raw form
 * rather than a 406: the credential is the one thing this path serves.
 */
export function credentialMediaType(accept: string | undefined, raw: string = VC_JWT_MEDIA_TYPE): string {
  const offered = [raw, ...CREDENTIAL_MEDIA_TYPES.slice(1)];
  return new Negotiator({ headers: { accept: accept ?? '*/*' } }).mediaType(offered) ?? raw;
}

/**
 * A vc+jwt as the Accept header asks for it, with an entity tag per representation: the credential
 * is rebuilt from the stored state on each request, so the tag is its hash, and an unchanged
 * passport or list answers a conditional GET with 304 (conditional.ts).
 */
export function credentialAnswer(jwt: string, accept: string | undefined): RouteResult {
  const raw = securedMediaType(jwt);
  const mediaType = credentialMediaType(accept, raw);
  const tag = `"${createHash('sha256').update(jwt).digest('base64url')}${mediaType === raw ? '' : `.${mediaType.split('/')[1]}`}"`;
  // The restricted view differs by caller: a cache keeps the views of different tokens apart.
  const vary = raw === VC_JWT_MEDIA_TYPE ? 'accept' : 'accept, authorization';
  const headers = { etag: tag, vary, 'cache-control': 'no-cache', 'content-type': mediaType === 'application/json' ? 'application/json; charset=utf-8' : mediaType };
  return mediaType === raw ? { headers, raw: Buffer.from(jwt) } : { headers, body: envelope(jwt) };
}

/** The entity tag of a document: the SHA-256 of its text. */
export const sha256Tag = (text: string) => `"${createHash('sha256').update(text).digest('base64url')}"`;

/** A list number that is no integer names no list: -1 asks for none. */
export const statusListVariables = ({ params }: RouteRequest) => ({ purpose: params.purpose, list: /^\d{1,9}$/.test(params.list ?? '') ? Number(params.list) : -1 });

export function noSuchStatusList(): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', 'The issuer has no status list of this purpose and number.'));
}
