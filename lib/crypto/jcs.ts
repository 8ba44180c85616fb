/**
 * RFC 8785 JSON Canonicalization Scheme.
 *
 * Members are sorted by their UTF-16 code units, numbers use the ECMAScript
 * Number-to-String form and strings the minimal JSON escaping; JSON.stringify
 * already implements both of those, so only the structure is walked here.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function canonicalize(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    if (typeof value === 'string') assertWellFormed(value);
    return JSON.stringify(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS cannot represent NaN or Infinity');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => canonicalize(item === undefined ? null : item)).join(',')}]`;
  }
  if (typeof value === 'object') {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      return canonicalize((value as { toJSON(): unknown }).toJSON());
    }
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      // Default string comparison in JS is by UTF-16 code units, as RFC 8785 §3.2.3 requires.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${canonicalize(key)}:${canonicalize(member)}`).join(',')}}`;
  }
  throw new TypeError(`JCS cannot represent a value of type ${typeof value}`);
}

export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalize(value));
}

function assertWellFormed(text: string): void {
  // RFC 8785 §3.2.2.2: lone surrogates cannot be canonicalized.
  if (/\p{Surrogate}/u.test(text)) throw new TypeError('JCS input contains a lone surrogate');
}
