import { decodeBase64UrlChecked } from '../platform/primitives.js';

/** RFC 4648 §5 base64url without padding, as JOSE uses it (a string: of its UTF-8 bytes). */
export { encodeBase64Url } from '../platform/primitives.js';

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict decoder: rejects padding and characters outside the base64url alphabet. */
export function decodeBase64Url(text: string): Uint8Array {
  if (!BASE64URL.test(text) || text.length % 4 === 1) {
    throw new TypeError('not base64url');
  }
  return decodeBase64UrlChecked(text);
}
