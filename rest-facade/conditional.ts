/**
 * Conditional GET (RFC 9110 §13.1.2): a client that holds a representation sends its entity tag in
 * If-None-Match, and gets 304 without the body when it still matches. Snapshots are immutable and
 * registry versions are tagged by version, so a verifier or cache re-checking them costs a header
 * round trip instead of the bytes. Any route whose result carries an `etag` takes part.
 */

/** The headers a 304 repeats (RFC 9110 §15.4.5); the body's own headers are left out. */
const REPEATED = ['etag', 'cache-control', 'content-location', 'expires', 'vary'];

/** Weak comparison (§8.8.3.2): the opaque tags match, whatever their W/ prefixes. */
const opaque = (tag: string) => tag.trim().replace(/^W\//, '');

/**
 * The headers of a 304 when `ifNoneMatch` names the current entity tag (or is `*`), else undefined.
 * Only for GET and HEAD of a 200 answer.
 */
export function notModified(method: string, ifNoneMatch: string | undefined, status: number, headers: Record<string, string>): Record<string, string> | undefined {
  const etag = headers.etag;
  if ((method !== 'GET' && method !== 'HEAD') || status !== 200 || !etag || ifNoneMatch === undefined) return undefined;
  const matches = ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
  if (!matches) return undefined;
  return Object.fromEntries(REPEATED.filter((name) => headers[name] !== undefined).map((name) => [name, headers[name]!]));
}
