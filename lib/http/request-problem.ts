import type { Problem } from '../problem.js';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** A request answered with an RFC 9457 problem, and the headers that go with it (Allow, Retry-After, …). */
export class RequestProblem extends Error {
  constructor(
    readonly details: Problem,
    readonly headers: Record<string, string> = {},
  ) {
    // A refusal is an answer, not a fault: no stack trace is captured for it (V8 builds one for every
    // Error, which was a noticeable part of what a 404 cost the facade); its details say what happened.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(details.detail ?? details.title);
    Error.stackTraceLimit = limit;
  }
}
