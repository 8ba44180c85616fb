/**
 * Passport identity: what physical thing a passport speaks for.
 *
 * Two spellings are accepted, both from GS1 standards:
 * - a GS1 Digital Link URI (GS1 Digital Link standard 1.x): `https://{host}{/prefix}/01/{gtin}`
 *   with the key qualifiers `/22/{variant}`, `/10/{lot}`, `/21/{serial}` in that order;
 * - the equivalent EPC pure-identity URN (GS1 Tag Data Standard 2.x): `urn:epc:id:sgtin:…` (an item),
 *   `urn:epc:class:lgtin:…` (a batch) or the pattern `urn:epc:idpat:sgtin:{prefix}.{ref}.*` (a model).
 *
 * The granularity follows from the identifier: a serial names an item, a lot a batch, a bare GTIN a
 * model. Both spellings normalise to one canonical Digital Link on id.gs1.org so that equal
 * identities compare equal.
 */
import { IssuerError, type IdentityFailure } from '../../../lib/formats/issuer/errors.js';
import type { Granularity, IdentityScheme } from '../../../lib/formats/issuer/identity.js';

export interface PassportIdentity {
  /** The identifier exactly as given. */
  uri: string;
  scheme: IdentityScheme;
  granularity: Granularity;
  /** GTIN-14, check digit verified. */
  gtin: string;
  /** AI 22, consumer product variant (Digital Link only). */
  variant?: string;
  /** AI 10, batch or lot number. */
  lot?: string;
  /** AI 21, serial number. */
  serial?: string;
  /** Canonical form: `https://id.gs1.org/01/{gtin14}[/22/…][/10/…][/21/…]`. */
  digital_link: string;
}

/** The canonical resolver host GS1 runs; used only to spell the canonical form. */
export const CANONICAL_DIGITAL_LINK_HOST = 'https://id.gs1.org';

/** Key qualifiers of AI 01 in the order GS1 Digital Link requires them. */
const QUALIFIERS = [
  { ai: '22', field: 'variant' },
  { ai: '10', field: 'lot' },
  { ai: '21', field: 'serial' },
] as const;

/** GS1 AI encodable character set 82 (GS1 General Specifications §7.11, figure 7.11-1). */
const CSET82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]{1,20}$/;

export function validateIdentity(uri: string, granularity?: Granularity): PassportIdentity {
  const identity = uri.startsWith('urn:') ? parseEpcUrn(uri) : parseDigitalLink(uri);
  if (granularity !== undefined && granularity !== identity.granularity) {
    refuse('GRANULARITY_MISMATCH', uri, `the identifier names a ${identity.granularity}, not a ${granularity}`);
  }
  return identity;
}

/** GS1 mod-10 check digit over the digits before it (weights 3,1,3,… from the right). */
export function gs1CheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const weight = (body.length - i) % 2 === 1 ? 3 : 1;
    sum += Number(body[i]) * weight;
  }
  return (10 - (sum % 10)) % 10;
}

function parseDigitalLink(uri: string): PassportIdentity {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return refuse('NOT_A_URI', uri, 'the identity is neither an absolute URI nor a urn:');
  }
  if (url.protocol !== 'https:') refuse('UNSUPPORTED_SCHEME', uri, 'a GS1 Digital Link identity must use https');
  // Data attributes in the query and fragments are not part of the identity; refusing them keeps
  // the stored identity canonical.
  if (url.search !== '' || url.hash !== '') refuse('QUERY_OR_FRAGMENT', uri, 'the identity carries a query or fragment');

  const segments = url.pathname.split('/').slice(1);
  // A custom resolver may put a path prefix before the primary key; the key is the last `01`
  // segment that leaves an even number of segments (AI/value pairs) after it.
  let start = -1;
  for (let i = segments.length - 2; i >= 0; i -= 1) {
    if (segments[i] === '01' && (segments.length - i) % 2 === 0) {
      start = i;
      break;
    }
  }
  if (start < 0) refuse('MISSING_GTIN', uri, 'no /01/{gtin} primary key in the path');

  const gtin = normaliseGtin(uri, segments[start + 1]!);
  const found: Partial<Record<(typeof QUALIFIERS)[number]['field'], string>> = {};
  let next = 0;
  for (let i = start + 2; i < segments.length; i += 2) {
    const ai = segments[i]!;
    const position = QUALIFIERS.findIndex((qualifier) => qualifier.ai === ai);
    if (position < next) {
      refuse('BAD_KEY_QUALIFIER', uri, `/${ai}/ is not a key qualifier of GTIN here (allowed in order: /22/, /10/, /21/)`);
    }
    found[QUALIFIERS[position]!.field] = aiValue(uri, ai, segments[i + 1]!);
    next = position + 1;
  }
  return assemble(uri, 'gs1-digital-link', gtin, found);
}

/** EPC URNs: company prefix and item reference separated, no check digit, GS1 TDS §6.3.1. */
const EPC_URN = /^urn:epc:(id:sgtin|class:lgtin|idpat:sgtin):(\d{6,12})\.(\d{1,7})\.(.+)$/;

function parseEpcUrn(uri: string): PassportIdentity {
  const match = EPC_URN.exec(uri);
  if (!match) {
    return refuse('BAD_EPC_URN', uri, 'expected urn:epc:id:sgtin:, urn:epc:class:lgtin: or urn:epc:idpat:sgtin: with prefix.reference.value');
  }
  const [, kind, companyPrefix, indicatorAndReference, last] = match as unknown as [string, string, string, string, string];
  if (companyPrefix.length + indicatorAndReference.length !== 13) {
    refuse('BAD_EPC_URN', uri, 'company prefix and indicator/item reference must have 13 digits together');
  }
  const body = `${indicatorAndReference[0]}${companyPrefix}${indicatorAndReference.slice(1)}`;
  const gtin = `${body}${gs1CheckDigit(body)}`;
  if (kind === 'idpat:sgtin') {
    if (last !== '*') refuse('BAD_EPC_URN', uri, 'a GTIN pattern ends in .* (any serial)');
    return assemble(uri, 'epc-urn', gtin, {});
  }
  const value = aiValue(uri, kind === 'id:sgtin' ? '21' : '10', last);
  return assemble(uri, 'epc-urn', gtin, kind === 'id:sgtin' ? { serial: value } : { lot: value });
}

function assemble(uri: string, scheme: PassportIdentity['scheme'], gtin: string, qualifiers: { variant?: string; lot?: string; serial?: string }): PassportIdentity {
  const granularity: Granularity = qualifiers.serial !== undefined ? 'item' : qualifiers.lot !== undefined ? 'batch' : 'model';
  let digitalLink = `${CANONICAL_DIGITAL_LINK_HOST}/01/${gtin}`;
  for (const { ai, field } of QUALIFIERS) {
    const value = qualifiers[field];
    if (value !== undefined) digitalLink += `/${ai}/${encodeURIComponent(value)}`;
  }
  return { uri, scheme, granularity, gtin, ...qualifiers, digital_link: digitalLink };
}

function normaliseGtin(uri: string, value: string): string {
  if (!/^\d+$/.test(value) || ![8, 12, 13, 14].includes(value.length)) {
    refuse('BAD_GTIN_LENGTH', uri, 'a GTIN has 8, 12, 13 or 14 digits');
  }
  const gtin = value.padStart(14, '0');
  if (gs1CheckDigit(gtin.slice(0, 13)) !== Number(gtin[13])) {
    refuse('BAD_GTIN_CHECK_DIGIT', uri, `GTIN ${value} fails its check digit`);
  }
  return gtin;
}

function aiValue(uri: string, ai: string, encoded: string): string {
  let value: string;
  try {
    value = decodeURIComponent(encoded);
  } catch {
    return refuse('BAD_AI_VALUE', uri, `the value of AI ${ai} is not valid percent-encoding`);
  }
  if (!CSET82.test(value)) {
    refuse('BAD_AI_VALUE', uri, `the value of AI ${ai} must be 1 to 20 characters of GS1 character set 82`);
  }
  return value;
}

function refuse(reason: IdentityFailure, identity: string, message: string): never {
  throw new IssuerError('INVALID_IDENTITY', `invalid passport identity: ${message}`, { reason, identity });
}
