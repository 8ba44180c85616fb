/** Query parameters: only the declared ones, each checked against its declared type. */
import { problem } from '../lib/problem.js';
import { RequestProblem } from './problems.js';
import { isRfc3339Instant, isRfc3339Interval } from '../lib/time.js';
import type { QueryParameter, Route, RouteRequest } from './route-table.js';

class QueryProblem extends Error {}

function convert(name: string, raw: string, spec: QueryParameter): string | number | boolean {
  switch (spec.type) {
    case 'integer': {
      if (!/^-?\d{1,15}$/.test(raw)) throw new QueryProblem(`${name} must be an integer`);
      const value = Number(raw);
      if ((spec.minimum !== undefined && value < spec.minimum) || (spec.maximum !== undefined && value > spec.maximum)) {
        throw new QueryProblem(`${name} must be between ${spec.minimum ?? '-∞'} and ${spec.maximum ?? '∞'}`);
      }
      return value;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new QueryProblem(`${name} must be true or false`);
      return raw === 'true';
    case 'date-time':
      if (!isRfc3339Instant(raw)) throw new QueryProblem(`${name} must be an RFC 3339 date-time, e.g. 2026-01-31T12:00:00Z`);
      return raw;
    case 'interval':
      if (!isRfc3339Interval(raw)) throw new QueryProblem(`${name} must be an RFC 3339 interval start/end; either end may be empty or ".."`);
      return raw;
    case 'string':
      if (spec.enum && !spec.enum.includes(raw)) throw new QueryProblem(`${name} must be one of ${spec.enum.join(', ')}`);
      if (raw.length > 1024) throw new QueryProblem(`${name} is too long`);
      return raw;
  }
}

export function parseQuery(route: Route, search: URLSearchParams): RouteRequest['query'] {
  const declared = route.query ?? {};
  const query: RouteRequest['query'] = {};
  try {
    for (const name of new Set(search.keys())) {
      const spec = declared[name];
      if (!spec) throw new QueryProblem(`unknown query parameter ${name}; this path takes ${Object.keys(declared).join(', ') || 'none'}`);
      const values = search.getAll(name);
      if (values.length > 1) throw new QueryProblem(`${name} may be given once`);
      query[name] = convert(name, values[0]!, spec);
    }
  } catch (error) {
    if (error instanceof QueryProblem) throw new RequestProblem(problem(400, 'INVALID_QUERY', error.message));
    throw error;
  }
  return query;
}
