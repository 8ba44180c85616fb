/**
 * The Digital Link resolver (GS1 Digital Link 1.x / ISO/IEC 18975, GS1-Conformant Resolver 1.x),
 * on the issuer's base URL: the path of a passport's identity, `/01/{gtin}` with the key qualifiers
 * `/22/{variant}`, `/10/{lot}`, `/21/{serial}` in that order, answers
 *
 * - an RFC 9264 linkset (`application/linkset+json`, or `application/linkset`) when asked for one by
 *   `Accept` or `?linkType=linkset` (`all`, GS1's older spelling, too);
 * - otherwise a 307 to the link of `?linkType=` (`gs1:pip`, a full GS1 vocabulary URI, or a
 *   registered relation name), or to the default link (`gs1:defaultLink`: the passport), with
 *   `Link: <…?linkType=linkset>; rel="linkset"`.
 *
 * The links name the identity's current passport (its live one; without one, its newest), its
 * UNTP credential, the verification page, its archive snapshots and its predecessor. Underneath is
 * one GraphQL query, `identityResolution`, with the archive's `snapshots` of the passport.
 */
import Negotiator from 'negotiator';
import { problem } from '../../lib/problem.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import { VERIFY_PAGE_PREFIX } from '../verify-page.js';
import type { JsonSchema, Route, RouteContext } from '../route-table.js';

/** GS1 Web Vocabulary link types are written as full URIs in linksets (GS1-Conformant Resolver §; RFC 8288 extension relation types). */
export const GS1_VOC = 'https://ref.gs1.org/voc/';
/** Spellings of the GS1 vocabulary's namespace a `linkType` may use (owl:equivalentProperty in the vocabulary). */
const GS1_NAMESPACES = [GS1_VOC, 'https://gs1.org/voc/', 'https://www.gs1.org/voc/', 'http://gs1.org/voc/'];

export const LINKSET_MEDIA_TYPE = 'application/linkset+json';
const LINKSET_TEXT_MEDIA_TYPE = 'application/linkset';

/** The relation types the resolver gives, in the order a linkset lists them. */
export const LINK_TYPES = {
  defaultLink: `${GS1_VOC}defaultLink`,
  dpp: `${GS1_VOC}dpp`,
  pip: `${GS1_VOC}pip`,
  predecessor: 'predecessor-version',
  archives: 'archives',
  memento: 'memento',
} as const;

export interface LinkTarget {
  href: string;
  title: string;
  type?: string;
}

/** One RFC 9264 link context object: the anchor, GS1's itemDescription, and targets by relation type. */
export type LinkContext = { anchor: string; itemDescription: string } & Record<string, string | LinkTarget[]>;

/** The key qualifiers of AI 01, in the order a Digital Link path takes them. */
const QUALIFIERS = [
  { ai: '22', name: 'variant' },
  { ai: '10', name: 'lot' },
  { ai: '21', name: 'serial' },
] as const;

/** Every path of a GTIN with qualifiers in order: /01/{gtin}, /01/{gtin}/22/{variant}, … (8 of them). */
function identityPaths(): { path: string; names: string[] }[] {
  const paths: { path: string; names: string[] }[] = [];
  for (let mask = 0; mask < 1 << QUALIFIERS.length; mask++) {
    const chosen = QUALIFIERS.filter((_, index) => mask & (1 << index));
    paths.push({ path: `/01/{gtin}${chosen.map(({ ai, name }) => `/${ai}/{${name}}`).join('')}`, names: chosen.map(({ name }) => name) });
  }
  return paths;
}

/** The identity's path from the request's values, each percent-encoded as a path segment. */
function identityPath(params: Record<string, string>): string {
  return `/01/${encodeURIComponent(params.gtin ?? '')}${QUALIFIERS.filter(({ name }) => params[name] !== undefined)
    .map(({ ai, name }) => `/${ai}/${encodeURIComponent(params[name]!)}`)
    .join('')}`;
}

/** The canonical path of a canonical Digital Link (its GTIN-14 and qualifiers), on any resolver. */
const canonicalPath = (digitalLink: string) => new URL(digitalLink).pathname;

const RESOLUTION_OPERATION = `query ResolveIdentity($identifier: String!) {
  resolution: identityResolution(identifier: $identifier) {
    digitalLink granularity identity
    current { id status predecessorId snapshots { id createdAt } }
    passports { id status }
  }
}`;

interface Resolution {
  digitalLink: string;
  granularity: string;
  identity: { gtin: string; variant?: string; lot?: string; serial?: string };
  current: { id: string; status: string; predecessorId: string | null; snapshots: { id: string; createdAt: string }[] } | null;
  passports: { id: string; status: string }[];
}

/** What the identity names, in words, for GS1's itemDescription. */
function describe(resolution: Resolution): string {
  const { identity } = resolution;
  const qualifiers = [identity.variant && `variant ${identity.variant}`, identity.lot && `lot ${identity.lot}`, identity.serial && `serial ${identity.serial}`].filter(Boolean);
  return `${resolution.granularity} of GTIN ${identity.gtin}${qualifiers.length ? `, ${qualifiers.join(', ')}` : ''}: passport ${resolution.current!.id} (${resolution.current!.status})`;
}

/** The linkset of an identity that has a passport: absolute URLs from the services' public base URLs. */
export function identityLinkset(resolution: Resolution, context: Pick<RouteContext, 'publicUrls'>): LinkContext {
  const passport = resolution.current!;
  const issuer = context.publicUrls.issuer;
  const archive = context.publicUrls.archive;
  const passportUrl = (id: string) => `${issuer}/passports/${encodeURIComponent(id)}`;
  const predecessor = resolution.passports.find((candidate) => candidate.id === passport.predecessorId);
  const links: LinkContext = {
    anchor: `${issuer}${canonicalPath(resolution.digitalLink)}`,
    itemDescription: describe(resolution),
    [LINK_TYPES.defaultLink]: [{ href: passportUrl(passport.id), title: 'Digital product passport' }],
    [LINK_TYPES.dpp]: [
      { href: passportUrl(passport.id), title: `Digital product passport (${passport.status})`, type: 'application/json' },
      { href: `${passportUrl(passport.id)}/credential`, title: 'UNTP Digital Product Passport credential', type: 'application/vc+jwt' },
    ],
    [LINK_TYPES.pip]: [{ href: new URL(`${VERIFY_PAGE_PREFIX}/`, issuer).href, title: 'Verification page: scan the passport’s QR code', type: 'text/html' }],
  };
  if (passport.predecessorId !== null) {
    links[LINK_TYPES.predecessor] = [
      { href: passportUrl(passport.predecessorId), title: `Previous passport of this ${resolution.granularity}${predecessor ? ` (${predecessor.status})` : ''}`, type: 'application/json' },
    ];
  }
  links[LINK_TYPES.archives] = [{ href: `${archive}/snapshots?passport_id=${encodeURIComponent(passport.id)}`, title: 'Archive snapshots of the passport', type: 'application/json' }];
  if (passport.snapshots.length > 0) {
    links[LINK_TYPES.memento] = passport.snapshots.map((snapshot) => ({
      href: `${archive}/snapshots/${encodeURIComponent(snapshot.id)}`,
      title: `Archive snapshot of ${snapshot.createdAt}`,
      type: 'application/x-tar',
    }));
  }
  return links;
}

/** A `linkType` value as the relation type a linkset keys it by: gs1: CURIEs and other namespace spellings become ref.gs1.org URIs. */
export function relationType(linkType: string): string {
  if (linkType.startsWith('gs1:')) return `${GS1_VOC}${linkType.slice(4)}`;
  const namespace = GS1_NAMESPACES.find((candidate) => linkType.startsWith(candidate));
  return namespace ? `${GS1_VOC}${linkType.slice(namespace.length)}` : linkType;
}

/** The linkset as `application/linkset` (RFC 9264 §4.1): Link header field syntax, one link a line. */
function linksetText(context: LinkContext): string {
  const quoted = (value: string) => `"${value.replace(/["\\]/g, '\\$&')}"`;
  const lines: string[] = [];
  for (const [rel, targets] of Object.entries(context)) {
    if (typeof targets === 'string') continue;
    for (const target of targets) {
      lines.push(`<${target.href}>; rel=${quoted(rel)}; anchor=${quoted(context.anchor)}; title=${quoted(target.title)}${target.type ? `; type=${quoted(target.type)}` : ''}`);
    }
  }
  return `${lines.join(',\n')}\n`;
}

/** Headers of every resolver answer: GS1 resolvers are read cross-origin (CORS), and the answer depends on Accept. */
const RESOLVER_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'Link, Location',
  vary: 'Accept',
  'cache-control': 'no-cache',
};

function noPassport(resolution: Resolution): RequestProblem {
  return new RequestProblem(
    problem(404, 'NOT_FOUND', `No passport was issued for the ${resolution.granularity} ${resolution.digitalLink}.`, { identity: resolution.digitalLink, granularity: resolution.granularity }),
  );
}

/** The answer to one resolution: a linkset, or a redirect to one link. */
function resolve(data: Record<string, any>, context: RouteContext) {
  const resolution = data.resolution as Resolution;
  if (!resolution.current) throw noPassport(resolution);
  const links = identityLinkset(resolution, context);
  const linkType = context.request.query.linkType as string | undefined;
  const wantsLinkset = linkType === 'linkset' || linkType === 'all';
  const negotiator = new Negotiator({ headers: { accept: context.request.accept ?? '*/*' } });
  // A browser's Accept (text/html first) or none at all is redirected; only a client that names a
  // linkset media type gets the linkset without asking for it by linkType.
  const preferred = negotiator.mediaType(['text/html', LINKSET_MEDIA_TYPE, LINKSET_TEXT_MEDIA_TYPE]);
  const asText = negotiator.mediaType([LINKSET_MEDIA_TYPE, LINKSET_TEXT_MEDIA_TYPE]) === LINKSET_TEXT_MEDIA_TYPE;

  let chosen: LinkContext = links;
  if (linkType !== undefined && !wantsLinkset) {
    const rel = relationType(linkType);
    const targets = links[rel];
    if (rel === 'anchor' || rel === 'itemDescription' || !Array.isArray(targets)) {
      throw new RequestProblem(
        problem(404, 'LINK_TYPE_NOT_AVAILABLE', `The ${resolution.granularity} ${resolution.digitalLink} has no link of type ${linkType}.`, {
          link_type: linkType,
          available: Object.keys(links).filter((key) => key !== 'anchor' && key !== 'itemDescription'),
        }),
        RESOLVER_HEADERS,
      );
    }
    chosen = { anchor: links.anchor, itemDescription: links.itemDescription, [rel]: targets } as LinkContext;
  }
  if (wantsLinkset || preferred === LINKSET_MEDIA_TYPE || preferred === LINKSET_TEXT_MEDIA_TYPE) {
    const raw = Buffer.from(asText ? linksetText(chosen) : JSON.stringify({ linkset: [chosen] }));
    return { headers: { ...RESOLVER_HEADERS, 'content-type': asText ? LINKSET_TEXT_MEDIA_TYPE : LINKSET_MEDIA_TYPE }, raw };
  }
  const targets = (linkType === undefined ? links[LINK_TYPES.defaultLink] : Object.values(chosen).find(Array.isArray)) as LinkTarget[];
  // Of several links of one type (the passport as JSON and as a credential), the one whose media type Accept prefers; the first by default.
  const byType = negotiator.mediaType(targets.map((target) => target.type ?? '*/*'));
  const target = targets.find((candidate) => candidate.type === byType) ?? targets[0]!;
  return {
    status: 307,
    empty: true,
    headers: { ...RESOLVER_HEADERS, location: target.href, link: `<${links.anchor}?linkType=linkset>; rel="linkset"; type="${LINKSET_MEDIA_TYPE}"` },
  };
}

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
  operation: RESOLUTION_OPERATION,
  variables: ({ params }) => ({ identifier: `https://id.gs1.org${identityPath(params)}` }),
  result: resolve,
  responses: {
    200: {
      description: 'The linkset of the identity (application/linkset+json; application/linkset when Accept prefers it).',
      mediaType: LINKSET_MEDIA_TYPE,
      schema: linksetSchema,
      example: LINKSET_EXAMPLE,
    },
    307: {
      description: 'To the default link (the passport) or the link of linkType; Link names the linkset.',
      headers: { Location: { type: 'string', format: 'uri' }, Link: { type: 'string', description: '<…?linkType=linkset>; rel="linkset"' } },
    },
  },
}));
