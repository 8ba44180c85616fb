/** Matching request paths against a route table, fixed segments before parameters. */
import type { HttpMethod, Route } from './route-table.js';

interface CompiledRoute {
  route: Route;
  segments: readonly string[];
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

export type MatchResult = { kind: 'found'; match: RouteMatch } | { kind: 'method-not-allowed'; allow: HttpMethod[] } | { kind: 'not-found' } | { kind: 'bad-path' };

const segmentsOf = (path: string) => (path === '/' ? [] : path.slice(1).split('/'));
const isParameter = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

/**
 * A route with a fixed segment where another has a parameter is more specific and is tried first,
 * so `/healthz` or `/items` can never be taken for the registry's `/{id}`.
 */
function bySpecificity(a: CompiledRoute, b: CompiledRoute): number {
  // Paths of different lengths never match the same request; ordering by length keeps the order total.
  if (a.segments.length !== b.segments.length) return a.segments.length - b.segments.length;
  for (let i = 0; i < a.segments.length; i++) {
    const fixedA = !isParameter(a.segments[i]!);
    const fixedB = !isParameter(b.segments[i]!);
    if (fixedA !== fixedB) return fixedA ? -1 : 1;
  }
  return 0;
}

export class RouteMatcher {
  readonly #routes: CompiledRoute[];

  constructor(routes: readonly Route[]) {
    this.#routes = routes.map((route) => ({ route, segments: segmentsOf(route.path) })).sort(bySpecificity);
  }

  match(method: string, path: string): MatchResult {
    let requestSegments: string[];
    try {
      requestSegments = segmentsOf(path).map((segment) => decodeURIComponent(segment));
    } catch {
      return { kind: 'bad-path' };
    }
    const candidates: RouteMatch[] = [];
    let best: readonly string[] | undefined;
    for (const { route, segments } of this.#routes) {
      if (segments.length !== requestSegments.length) continue;
      const params: Record<string, string> = {};
      const fits = segments.every((segment, i) => {
        if (isParameter(segment)) {
          params[segment.slice(1, -1)] = requestSegments[i]!;
          return requestSegments[i] !== '';
        }
        return segment === requestSegments[i];
      });
      if (!fits) continue;
      // Only the most specific path shape answers; a less specific one with other methods does not.
      if (best && best.join('/') !== segments.join('/')) continue;
      best = segments;
      candidates.push({ route, params });
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    const wanted = method === 'HEAD' ? 'GET' : method;
    const found = candidates.find((candidate) => candidate.route.method === wanted);
    if (found) return { kind: 'found', match: found };
    const allow = [...new Set(candidates.map((candidate) => candidate.route.method))];
    return { kind: 'method-not-allowed', allow };
  }
}
