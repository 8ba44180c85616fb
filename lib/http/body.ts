import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/** Reads a request body, refusing it once it passes `limit` bytes (declared or actual). */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    request.resume();
    throw new BodyTooLargeError(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      request.resume();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Deepest nesting of arrays and objects a JSON request body may have (DESIGN-NOTES, bad input). */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a parsed JSON value nests arrays and objects deeper than `limit`. Iterative, so that it
 * never overflows the stack itself: JSON.parse takes nesting that JSON.stringify, GraphQL input
 * coercion and the subgraph requests later recurse into until the stack runs out (a 5xx).
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const member of Array.isArray(current) ? current : Object.values(current)) if (member !== null && typeof member === 'object') stack.push([member, depth + 1]);
  }
  return false;
}
