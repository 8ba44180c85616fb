/**
 * RFC 9457 problem details, raised by domain and service code and carried through GraphQL as error
 * extensions, so the REST facade can answer with the same status, code and detail.
 */
import { GraphQLError } from 'graphql';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  /** Machine-readable reason, stable across releases (e.g. `ILLEGAL_TRANSITION`). */
  code: string;
  [extension: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  431: 'Request Header Fields Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/**
 * A problem's type: a link to the code's row on the page of every code (docs/GRAPHQL-ERRORS.md, served
 * by the facade at /docs/problems). Relative here; the facade makes it absolute with its own origin.
 */
export function problemType(code: string): string {
  return `/docs/problems#${code.toLowerCase().replaceAll('_', '-')}`;
}

export function problem(status: number, code: string, detail?: string, extensions: Record<string, unknown> = {}): Problem {
  return { type: problemType(code), title: TITLES[status] ?? 'Error', status, code, ...(detail === undefined ? {} : { detail }), ...extensions };
}

/** A GraphQL error that carries its problem details in `extensions.problem`. */
/**
 * The headers a problem asks for: a 503, 504 or 429 says when to try again (RFC 9110 §10.2.3), from
 * the problem's `retry_after` seconds.
 */
export function problemHeaders(details: Problem): Record<string, string> {
  // A service's 401 carries its Bearer challenge (lib/graphql/context.ts, roleChecker).
  if (details.status === 401 && typeof details.authenticate === 'string') return { 'www-authenticate': details.authenticate };
  if (details.status !== 503 && details.status !== 504 && details.status !== 429) return {};
  const seconds = typeof details.retry_after === 'number' ? details.retry_after : 5;
  return { 'retry-after': String(seconds) };
}

export class ProblemError extends GraphQLError {
  readonly problem: Problem;

  constructor(status: number, code: string, detail: string, extensions: Record<string, unknown> = {}) {
    const details = problem(status, code, detail, extensions);
    super(detail, { extensions: { code, problem: details } });
    this.problem = details;
  }
}

export const badRequest = (code: string, detail: string, extensions?: Record<string, unknown>) => new ProblemError(400, code, detail, extensions);
export const notFound = (detail: string, extensions?: Record<string, unknown>) => new ProblemError(404, 'NOT_FOUND', detail, extensions);
export const conflict = (code: string, detail: string, extensions?: Record<string, unknown>) => new ProblemError(409, code, detail, extensions);
export const unprocessable = (code: string, detail: string, extensions?: Record<string, unknown>) => new ProblemError(422, code, detail, extensions);

/** Reads problem details back from a GraphQL error as the gateway passes it on. */
export function problemOf(error: { message?: string; extensions?: Record<string, unknown> }): Problem | undefined {
  const details = error.extensions?.problem;
  if (details && typeof details === 'object' && typeof (details as Problem).status === 'number') return details as Problem;
  return undefined;
}

/**
 * Runs a domain or data operation, answering the refusals `problemFor` recognises (it returns
 * undefined for anything else) as problems; every other error passes through untouched. The one
 * way each service turns its domain's refusals into RFC 9457 problems.
 */
export async function refusing<T>(operation: () => Promise<T> | T, problemFor: (error: unknown) => ProblemError | undefined): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw problemFor(error) ?? error;
  }
}
