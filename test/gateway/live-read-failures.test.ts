/**
 * Which failed reads of a live subscription are read again (the stream stays open and loses
 * nothing) and which end it with their errors: a subgraph or its database away may recover, a
 * refusal (a 4xx problem, a refusal's code) would be refused again forever.
 */
import { describe, expect, it } from 'vitest';
import { mayRecover } from '../../gateway/live/live-subscription.js';
import { problem } from '../../lib/problem.js';

const failed = (code: string, status?: number) => ({ message: code, extensions: { code, ...(status ? { problem: problem(status, code, code) } : {}) } });

describe('a live read that failed', () => {
  it('is read again when a subgraph, its database or the gateway may recover, or the failure cannot be told', () => {
    expect(mayRecover([failed('SUBGRAPH_UNAVAILABLE', 503)])).toBe(true);
    expect(mayRecover([failed('DATABASE_UNAVAILABLE', 503)])).toBe(true);
    expect(mayRecover([failed('INTERNAL_SERVER_ERROR', 500)])).toBe(true);
    expect(mayRecover([failed('INTERNAL_SERVER_ERROR')])).toBe(true);
    expect(mayRecover([failed('RATE_LIMITED', 429)])).toBe(true);
    expect(mayRecover([{ message: 'socket hang up' }])).toBe(true);
    // A refusal beside a failure: the failure may have caused it.
    expect(mayRecover([failed('OWNED_BY_ANOTHER_OPERATOR', 403), failed('SUBGRAPH_UNAVAILABLE', 503)])).toBe(true);
  });

  it('ends the subscription when refused', () => {
    expect(mayRecover([failed('INVALID_TOKEN', 401)])).toBe(false);
    expect(mayRecover([failed('OWNED_BY_ANOTHER_OPERATOR', 403)])).toBe(false);
    expect(mayRecover([failed('INVALID_QUERY', 400)])).toBe(false);
    expect(mayRecover([failed('GRAPHQL_VALIDATION_FAILED')])).toBe(false);
    expect(mayRecover([failed('UNAUTHENTICATED'), failed('BAD_USER_INPUT')])).toBe(false);
  });
});
