/**
 * The Digital Link resolver, on the issuer's base URL: the path of a passport's identity, `/01/{gtin}`
 * with the key qualifiers `/22/{variant}`, `/10/{lot}`, `/21/{serial}` in that order, answers
 *
 * - an RFC 9264 linkset when asked for one by `Accept` or `?linkType=linkset` (`all`, GS1's older
 *   spelling, too);
 * - otherwise a 307 to the link of `?linkType=` (`gs1:pip`, a full GS1 vocabulary URI, or a
 *   registered relation name), or to the default link (`gs1:defaultLink`: the passport), with
 *   `Link: <…?linkType=linkset>; rel="linkset"`.
 *
 * Underneath is one GraphQL query, `identityResolution`, with the archive's `snapshots` of the passport.
 */
import type { Route } from '../../route-table.js';
import { identityPath, LINKSET_MEDIA_TYPE, QUALIFIERS, resolve } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

/** Every path of a GTIN with qualifiers in order: /01/{gtin}, /01/{gtin}/22/{variant}, … (8 of them). */
function identityPaths(): { path: string; names: string[] }[] {
  const paths: { path: string; names: string[] }[] = [];
  for (let mask = 0; mask < 1 << QUALIFIERS.length; mask++) {
    const chosen = QUALIFIERS.filter((_, index) => mask & (1 << index));
    paths.push({ path: `/01/{gtin}${chosen.map(({ ai, name }) => `/${ai}/{${name}}`).join('')}`, names: chosen.map(({ name }) => name) });
  }
  return paths;
}

const PARAMS: Record<string, string> = {
  gtin: 'GTIN-8, -12, -13 or -14 (AI 01), check digit verified.',
  variant: 'Consumer product variant (AI 22).',
  lot: 'Batch or lot number (AI 10).',
  serial: 'Serial number (AI 21).',
};

export const digitalLinkRoutes: Route[] = identityPaths().map(({ path, names }) => ({
  method: 'GET',
  path,
  summary: `Digital Link resolver for ${names.includes('serial') ? 'an item' : names.includes('lot') ? 'a batch' : 'a model'}${names.length ? ` (${names.join(', ')})` : ''}: a linkset (RFC 9264) on request, else a 307 to the default or requested link`,
  params: Object.fromEntries(['gtin', ...names].map((name) => [name, PARAMS[name]!])),
  query: {
    linkType: {
      type: 'string',
      description:
        'linkset (or all): the linkset; a link type (gs1:dpp, gs1:pip, gs1:defaultLink, https://ref.gs1.org/voc/…, predecessor-version, archives, memento): a redirect to that link; none: the default link.',
    },
  },
  otherQueryParameters: 'GS1 Digital Link data attributes and other parameters are taken and ignored.',
  operation: operations.RESOLVE_IDENTITY,
  variables: ({ params }) => ({ identifier: `https://id.gs1.org${identityPath(params)}` }),
  result: resolve,
  responses: {
    200: {
      description: 'The linkset of the identity (application/linkset+json; application/linkset when Accept prefers it).',
      mediaType: LINKSET_MEDIA_TYPE,
      ...schemas.linkset,
    },
    307: {
      description: 'To the default link (the passport) or the link of linkType; Link names the linkset.',
      headers: { Location: { type: 'string', format: 'uri' }, Link: { type: 'string', description: '<…?linkType=linkset>; rel="linkset"' } },
    },
  },
}));
