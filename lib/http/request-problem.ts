import type { Problem } from '../problem.js';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** A request answered with an RFC 9457 problem, and the headers that go with it (Allow, Retry-After, …). */
export class RequestProblem extends Error {
  constructor(
    readonly details: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    super(details.detail ?? details.title);
  }
}
