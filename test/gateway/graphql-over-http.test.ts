/**
 * The GraphQL-over-HTTP specification, as its reference implementation's public audit suite
 * (graphql-http `serverAudits`) checks a server: every MUST, SHOULD and MAY against the gateway.
 */
import { serverAudits } from 'graphql-http';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;

beforeAll(async () => {
  platform = await sharedTestStack();
});

describe('the gateway, audited by graphql-http', () => {
  it('passes every MUST, SHOULD and MAY audit', async () => {
    const audits = serverAudits({ url: platform.stack.gateway.graphqlUrl, fetchFn: fetch });
    const failed: string[] = [];
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== 'ok') failed.push(`${audit.name}: ${result.reason}`);
    }
    console.log(`${audits.length - failed.length} of ${audits.length} audits pass`);
    expect(failed).toEqual([]);
  });
});
