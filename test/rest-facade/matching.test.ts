import { describe, expect, it } from 'vitest';
import { RouteMatcher } from '../../rest-facade/matching.js';
import type { Route } from '../../rest-facade/route-table.js';
import { camelizeKeys } from '../../rest-facade/route-table.js';

const route = (method: Route['method'], path: string): Route => ({ method, path, summary: path, operation: '{ __typename }', result: () => ({}), responses: {} });

/** The shape of the registry's table: fixed collections beside the catch-all `/{id}` paths. */
const registry = new RouteMatcher([
  route('GET', '/{id}'),
  route('GET', '/{id}/supersession'),
  route('POST', '/{id}/versions'),
  route('GET', '/'),
  route('POST', '/'),
  route('GET', '/healthz'),
  route('GET', '/admin/log'),
  route('POST', '/admin/seed'),
  route('GET', '/items'),
  route('GET', '/items/{id}'),
  route('GET', '/items/{id}/supersession'),
  route('POST', '/items/{id}/versions'),
  route('POST', '/models/{id}/validate'),
]);

const matched = (method: string, path: string) => {
  const result = registry.match(method, path);
  return result.kind === 'found' ? `${result.match.route.method} ${result.match.route.path} ${JSON.stringify(result.match.params)}` : result.kind;
};

describe('route matching', () => {
  it('lets fixed paths win over /{id}', () => {
    expect(matched('GET', '/healthz')).toBe('GET /healthz {}');
    expect(matched('GET', '/items')).toBe('GET /items {}');
    expect(matched('GET', '/admin/log')).toBe('GET /admin/log {}');
    expect(matched('GET', '/battery-model')).toBe('GET /{id} {"id":"battery-model"}');
    expect(matched('GET', '/items/supersession')).toBe('GET /items/{id} {"id":"supersession"}');
    expect(matched('GET', '/x/supersession')).toBe('GET /{id}/supersession {"id":"x"}');
  });

  it('answers 405 with the methods of the most specific path only', () => {
    expect(registry.match('POST', '/healthz')).toEqual({ kind: 'method-not-allowed', allow: ['GET'] });
    expect(registry.match('DELETE', '/')).toEqual({ kind: 'method-not-allowed', allow: ['GET', 'POST'] });
    expect(registry.match('GET', '/admin/seed')).toEqual({ kind: 'method-not-allowed', allow: ['POST'] });
    // `/admin/seed` is fixed, so it does not fall through to `/{id}/supersession` or the like.
    expect(registry.match('GET', '/models/m1/validate')).toEqual({ kind: 'method-not-allowed', allow: ['POST'] });
  });

  it('treats HEAD as GET, decodes parameters and refuses bad percent-encoding', () => {
    expect(matched('HEAD', '/items/a%20b')).toBe('GET /items/{id} {"id":"a b"}');
    expect(registry.match('GET', '/items/%E0%A4%A')).toEqual({ kind: 'bad-path' });
    expect(registry.match('GET', '/a/b/c/d')).toEqual({ kind: 'not-found' });
  });
});

describe('camelizeKeys', () => {
  it('renames REST members for GraphQL and leaves opaque documents alone', () => {
    expect(camelizeKeys({ passport_id: 'p', type_ref: { model_id: 'm' }, config_vector: { cell_count: 4 } }, ['config_vector'])).toEqual({
      passportId: 'p',
      typeRef: { modelId: 'm' },
      configVector: { cell_count: 4 },
    });
  });
});
