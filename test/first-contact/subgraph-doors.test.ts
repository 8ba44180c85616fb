/**
 * A subgraph's port reached directly, as someone who scans the host finds it: the same limits as the
 * gateway (aliases, depth, cost, tokens), refused at once and without touching the database, while
 * requests through the front door go on being answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;

async function askSubgraph(query: string): Promise<{ status: number; body: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] } }> {
  const response = await fetch(platform.stack.subgraphUrls.trust, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return { status: response.status, body: (await response.json()) as never };
}

beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

describe('a subgraph reached directly', () => {
  it('refuses 2,000 aliases of trustGraph before running any, while the facade keeps answering', async () => {
    const aliases = Array.from({ length: 2_000 }, (_, i) => `g${i}: trustGraph { nodes { id } }`).join(' ');
    const [refused, ...others] = await Promise.all([askSubgraph(`{ ${aliases} }`), ...Array.from({ length: 10 }, () => platform.rest('trust', '/graph'))]);
    expect(refused.body.data).toBeUndefined();
    // 12,000 tokens: the token limit is met before the alias limit would be.
    expect(refused.body.errors?.[0]?.message).toMatch(/more that \d+ tokens|alias/i);
    expect(others.map((answer) => answer.status)).toEqual(others.map(() => 200));
    const hundred = await askSubgraph(`{ ${Array.from({ length: 100 }, (_, i) => `g${i}: trustGraph { nodes { id } }`).join(' ')} }`);
    expect(hundred.body.data).toBeUndefined();
    expect(hundred.body.errors?.[0]?.message).toMatch(/alias/i);
  });

  it('refuses an operation of more tokens than the limit allows, and accepts the gateway-sized ones', async () => {
    expect((await askSubgraph(`{ ${'__typename '.repeat(100)} }`)).body.errors).toBeUndefined();
    const huge = await askSubgraph(`{ ${'__typename '.repeat(20_000)} }`);
    expect(huge.body.data).toBeUndefined();
    expect(huge.body.errors?.[0]?.message).toMatch(/token/i);
  });
});
