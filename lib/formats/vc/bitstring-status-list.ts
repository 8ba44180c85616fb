/**
 * W3C Bitstring Status List v1.0: lists of 131,072 one-bit entries (the specification's minimum, for
 * herd privacy), index 0 the left-most bit of the first byte; published GZIP-compressed and
 * multibase base64url-encoded (`u` prefix, no padding) in a BitstringStatusListCredential; each
 * credential names its entry with a BitstringStatusListEntry.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeBase64Url, encodeBase64Url } from '../../crypto/base64url.js';
import { CREDENTIALS_V2_CONTEXT } from './vc-jose.js';

/** Entries per list: the specification's minimum length (16 KiB of bits). */
export const STATUS_LIST_LENGTH = 131_072;
export const STATUS_LIST_BYTES = STATUS_LIST_LENGTH / 8;

/** The two purposes the passport statuses map onto (docs/INTEROP.md). */
export const STATUS_PURPOSES = ['revocation', 'suspension'] as const;
export type StatusPurpose = (typeof STATUS_PURPOSES)[number];

export function isStatusPurpose(value: string): value is StatusPurpose {
  return (STATUS_PURPOSES as readonly string[]).includes(value);
}

/** Which list (0, 1, …) and which entry in it a global status index names. */
export function statusPosition(index: number): { list: number; entry: number } {
  return { list: Math.floor(index / STATUS_LIST_LENGTH), entry: index % STATUS_LIST_LENGTH };
}

/** The bit at an entry, left-most first. */
export function bitAt(bits: Uint8Array, entry: number): boolean {
  return ((bits[entry >> 3]! >> (7 - (entry & 7))) & 1) === 1;
}

/** GZIP (mtime 0, so equal bits give equal text), then multibase base64url. */
export function encodeStatusList(bits: Uint8Array): string {
  if (bits.length < STATUS_LIST_BYTES) throw new RangeError(`a status list has at least ${STATUS_LIST_LENGTH} entries`);
  return `u${encodeBase64Url(gzipSync(bits, { level: 9 }))}`;
}

export function decodeStatusList(encodedList: string): Uint8Array {
  if (!encodedList.startsWith('u')) throw new TypeError('encodedList is multibase base64url: it starts with "u"');
  return new Uint8Array(gunzipSync(decodeBase64Url(encodedList.slice(1))));
}

export interface BitstringStatusListEntry {
  id: string;
  type: 'BitstringStatusListEntry';
  statusPurpose: StatusPurpose;
  /** An integer, as a string (the specification's form). */
  statusListIndex: string;
  statusListCredential: string;
}

export function statusListEntry(listUrl: string, purpose: StatusPurpose, entry: number): BitstringStatusListEntry {
  return { id: `${listUrl}#${entry}`, type: 'BitstringStatusListEntry', statusPurpose: purpose, statusListIndex: String(entry), statusListCredential: listUrl };
}

export interface StatusListCredentialInput {
  /** The URL the credential is served at (and its id). */
  url: string;
  issuer: { id: string; name: string };
  purpose: StatusPurpose;
  /** When the list last changed: the credential says it from then. */
  validFrom: Date;
  bits: Uint8Array;
}

/** The unsecured BitstringStatusListCredential of one list. */
export function statusListCredential(input: StatusListCredentialInput): Record<string, unknown> {
  return {
    '@context': [CREDENTIALS_V2_CONTEXT],
    id: input.url,
    type: ['VerifiableCredential', 'BitstringStatusListCredential'],
    issuer: input.issuer,
    validFrom: input.validFrom.toISOString(),
    credentialSubject: { id: `${input.url}#list`, type: 'BitstringStatusList', statusPurpose: input.purpose, encodedList: encodeStatusList(input.bits) },
  };
}
