/**
 * How the Digital Link resolver answers (GS1 Digital Link 1.x / ISO/IEC 18975, GS1-Conformant
 * Resolver 1.x): an identity's path becomes the identifier asked about, and its resolution an RFC 9264
 * linkset (`application/linkset+json`, or `application/linkset`) or a 307 to one of its links.
 *
 * The links name the identity's current passport (its live one; without one, its newest), its
 * UNTP credential, the verification page, its archive snapshots and its predecessor, made from the
 * services' public base URLs.
 */
import Negotiator from 'negotiator';
import { VC_JWT_MEDIA_TYPE, VC_SD_JWT_MEDIA_TYPE } from '../../../lib/formats/vc/index.js';
import { problem } from '../../../lib/problem.js';
import { RequestProblem } from '../../../lib/http/request-problem.js';
import { VERIFY_PAGE_PREFIX } from '../../verify-page.js';
import type { RouteContext } from '../../route-table.js';

/** GS1 Web Vocabulary link types are written as full URIs in linksets (GS1-Conformant Resolver §; RFC 8288 extension relation types). */
const GS1_VOC = 'https://ref.gs1.org/voc/';
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

interface LinkTarget {
  href: string;
  title: string;
  type?: string;
}

/** One RFC 9264 link context object: the anchor, GS1's itemDescription, and targets by relation type. */
type LinkContext = { anchor: string; itemDescription: string } & Record<string, string | LinkTarget[]>;

/** The key qualifiers of AI 01, in the order a Digital Link path takes them. */
export const QUALIFIERS = [
  { ai: '22', name: 'variant' },
  { ai: '10', name: 'lot' },
  { ai: '21', name: 'serial' },
] as const;

/** The identity's path from the request's values, each percent-encoded as a path segment. */
export function identityPath(params: Record<string, string>): string {
  return `/01/${encodeURIComponent(params.gtin ?? '')}${QUALIFIERS.filter(({ name }) => params[name] !== undefined)
    .map(({ ai, name }) => `/${ai}/${encodeURIComponent(params[name]!)}`)
    .join('')}`;
}

/** The canonical path of a canonical Digital Link (its GTIN-14 and qualifiers), on any resolver. */
const canonicalPath = (digitalLink: string) => new URL(digitalLink).pathname;

interface Resolution {
  digitalLink: string;
  granularity: string;
  identity: { gtin: string; variant?: string; lot?: string; serial?: string };
  current: { id: string; status: string; restricted: boolean; predecessorId: string | null; snapshots: { id: string; createdAt: string }[] } | null;
  passports: { id: string; status: string }[];
}

/** What the identity names, in words, for GS1's itemDescription. */
function describe(resolution: Resolution): string {
  const { identity } = resolution;
  const qualifiers = [identity.variant && `variant ${identity.variant}`, identity.lot && `lot ${identity.lot}`, identity.serial && `serial ${identity.serial}`].filter(Boolean);
  return `${resolution.granularity} of GTIN ${identity.gtin}${qualifiers.length ? `, ${qualifiers.join(', ')}` : ''}: passport ${resolution.current!.id} (${resolution.current!.status})`;
}

/** The linkset of an identity that has a passport: absolute URLs from the services' public base URLs. */
function identityLinkset(resolution: Resolution, context: Pick<RouteContext, 'publicUrls'>): LinkContext {
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
      { href: `${passportUrl(passport.id)}/credential`, title: 'UNTP Digital Product Passport credential', type: passport.restricted ? VC_SD_JWT_MEDIA_TYPE : VC_JWT_MEDIA_TYPE },
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
function relationType(linkType: string): string {
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
export function resolve(data: Record<string, any>, context: RouteContext) {
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
