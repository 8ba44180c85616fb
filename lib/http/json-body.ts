/**
 * How the facade and the gateway read a JSON request body: strict UTF-8, not empty, at most MAX_JSON_DEPTH deep,
 * and no object naming a member twice. JSON.parse keeps the last of two equal names silently; for a
 * signed document that is ambiguous (another reader may keep the first), so such a body is refused.
 */
import { visit } from 'jsonc-parser';
import { problem } from '../problem.js';
import { RequestProblem } from './request-problem.js';

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

/** `application/json` and every `application/…+json` type (RFC 6839), with parameters. */
export const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

const malformed = (detail: string) => new RequestProblem(problem(400, 'MALFORMED_JSON', detail));

/** The first member name an object of `text` (valid JSON) repeats, decoded, as a JSON Pointer to that object. */
export function duplicateMember(text: string): string | undefined {
  const objects: Set<string>[] = [];
  const path: string[] = [];
  let found: string | undefined;
  visit(text, {
    onObjectBegin: () => void objects.push(new Set()),
    onObjectEnd: () => void objects.pop(),
    onObjectProperty(name, _offset, _length, _line, _column, pathSupplier) {
      const names = objects.at(-1)!;
      if (found === undefined && names.has(name)) {
        path.push(...pathSupplier().map((segment) => String(segment).replaceAll('~', '~0').replaceAll('/', '~1')));
        found = `"${name}" in ${path.length ? `/${path.join('/')}` : 'the body'}`;
      }
      names.add(name);
    },
  });
  return found;
}

/**
 * Parses a request body as JSON, or throws the 400 problem that says why not. `maxDepth` counts the
 * body's own nesting; an envelope (GraphQL's {"variables": {…}}) adds its levels to the limit.
 */
export function parseJsonBody(raw: Buffer, maxDepth: number = MAX_JSON_DEPTH): unknown {
  let text: string;
  try {
    text = UTF8.decode(raw);
  } catch {
    throw malformed('The body is not UTF-8.');
  }
  if (text.trim() === '') throw malformed('The body is empty; a JSON object is required.');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw malformed(`The body is not valid JSON: ${(error as Error).message}`);
  }
  // JSON.parse takes any nesting; passing it on to the gateway overflowed the stack (a 503/500). Checked
  // before duplicateMember, whose parser recurses too.
  if (nestedDeeperThan(body, maxDepth)) throw new RequestProblem(problem(400, 'INVALID_BODY', `The body nests arrays and objects more than ${maxDepth} deep.`));
  const duplicate = duplicateMember(text);
  if (duplicate) throw malformed(`The body names member ${duplicate} more than once; JSON readers disagree on which one counts.`);
  return body;
}
