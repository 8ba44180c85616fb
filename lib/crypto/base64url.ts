/** RFC 4648 §5 base64url without padding, as JOSE uses it. */
export function encodeBase64Url(bytes: Uint8Array | string): string {
  const buffer = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes);
  return buffer.toString('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict decoder: rejects padding and characters outside the base64url alphabet. */
export function decodeBase64Url(text: string): Uint8Array {
  if (!BASE64URL.test(text) || text.length % 4 === 1) {
    throw new TypeError('not base64url');
  }
  return new Uint8Array(Buffer.from(text, 'base64url'));
}
