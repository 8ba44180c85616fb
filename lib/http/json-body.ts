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

/**
 * Whether an object of `text` (valid JSON) names a member twice: one pass that jumps from quote to
 * quote with indexOf, so that long strings (a GraphQL query is most of a gateway request's body) cost
 * a native search rather than a tokenizer's step per character. A string is a member name when a
 * colon follows it; a name with an escape is compared decoded.
 */
function repeatsMember(text: string): boolean {
  const objects: Set<string>[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */) objects.push(new Set());
    else if (c === 0x7d /* } */) objects.pop();
    else if (c === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      // A quote after an odd run of backslashes is escaped.
      for (;;) {
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes += 1;
        if (backslashes % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      let next = end + 1;
      while (next < text.length && (text.charCodeAt(next) === 0x20 || text.charCodeAt(next) === 0x0a || text.charCodeAt(next) === 0x0d || text.charCodeAt(next) === 0x09)) next += 1;
      if (text.charCodeAt(next) === 0x3a /* : */) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        const names = objects.at(-1)!;
        if (names.has(name)) return true;
        names.add(name);
      }
      i = end;
    }
    i += 1;
  }
  return false;
}

/** The first member name an object of `text` (valid JSON) repeats, decoded, as a JSON Pointer to that object. */
export function duplicateMember(text: string): string | undefined {
  // Most bodies repeat nothing: the quick pass says so; the tokenizer below finds the pointer when one does.
  if (!repeatsMember(text)) return undefined;
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
