/**
 * The write bodies docs/trust.md offers to copy, sent exactly as written there (each JSON block
 * after a `<!-- POST /path -->` line, in document order) to a new platform: each is accepted.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
}, 60_000);
afterAll(() => platform?.stop());

const documented = [...readFileSync(new URL('../../docs/trust.md', import.meta.url), 'utf8').matchAll(/<!-- POST (\S+) -->\n```json\n([\s\S]*?)\n```/g)].map(([, path, body]) => ({
  path: path!,
  body: body!,
}));

describe('docs/trust.md write bodies', () => {
  it('are there for nodes, trust lists, entries and revocations', () => {
    expect(documented.map(({ path }) => path)).toEqual(['/nodes', '/trust-lists', '/trust-lists/DE/entries', '/revocations']);
  });

  it('are each accepted as written, by a writer', async () => {
    for (const { path, body } of documented) {
      const response = await platform.rest('trust', path, { body, as: 'writer' });
      // Each creates something on a new platform: 201 with Location (docs/REST.md).
      expect([path, response.status, Boolean(response.headers.get('location'))], JSON.stringify(response.body)).toEqual([path, 201, true]);
    }
  });
});
