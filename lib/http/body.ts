import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

/**
 * Reads a request body, refusing it once it passes `limit` bytes (declared or actual). What comes
 * after the limit is read and dropped, so the connection stays usable for the client's next request.
 * (It used to stop with `for await`, whose early exit destroys the request stream: a kept-alive
 * connection that had carried a chunked body over the limit then never answered again.)
 */
export async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    request.resume();
    throw new BodyTooLargeError(limit);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > limit) {
        refused = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
    request.on('close', () => reject(new Error('the client closed the request before its body ended')));
  });
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
