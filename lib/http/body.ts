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
