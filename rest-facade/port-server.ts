/**
 * One port of the facade on the platform's server (lib/server/platform-server.ts): the services
 * mounted there (service-mount.ts), the facade's pages (pages.ts), and every refusal, from the
 * framework or a service, as an RFC 9457 problem.
 */
import type { ServiceMount } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';
import { JSON_MEDIA_TYPE, parseJsonBody } from '../lib/http/json-body.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { drainRefusedBody } from '../lib/http/server-options.js';
import type { ReadinessCheck } from '../lib/ops/operations.js';
import { problem } from '../lib/problem.js';
import type { EdgeOptions } from '../lib/server/edge-options.js';
import { buildPlatformServer, type PlatformServer } from '../lib/server/platform-server.js';
import { SHARED_SCHEMAS } from './openapi.js';
import type { FacadePages } from './pages.js';
import { problemOfFrameworkError } from './problems.js';
import type { ServiceRoutes } from './route-table.js';
import { mountService, OTHER_METHODS, type ServiceMounting } from './service-mount.js';
import { validatorCompiler } from './validation.js';

export interface PortServing extends ServiceMounting {
  edge: EdgeOptions;
  readiness: Record<string, ReadinessCheck>;
  tables: Record<ServiceName, ServiceRoutes>;
  pages: FacadePages;
}

export async function servePort(mounts: readonly ServiceMount[], facade: PortServing): Promise<PlatformServer> {
  const { bodyLimit, sendProblem } = facade;
  const server = await buildPlatformServer('facade', facade.edge, {
    readiness: facade.readiness,
    errorHandler: (error, request, reply) => {
      drainRefusedBody(request.raw, reply);
      const refused = error instanceof RequestProblem ? error : problemOfFrameworkError(error, bodyLimit);
      if (refused) return sendProblem(request, reply, refused.details, refused.headers);
      request.log.error({ err: error }, 'internal error');
      return sendProblem(request, reply, problem(500, 'INTERNAL_ERROR', 'The REST facade failed to answer; the failure is logged.'));
    },
    fastify: {
      // Ids are the services' to judge (404), however long; the header limit bounds a request line.
      routerOptions: { ignoreTrailingSlash: true, maxParamLength: 16_384 },
      exposeHeadRoutes: true,
      frameworkErrors: (error, request, reply) => {
        const refused = problemOfFrameworkError(error, bodyLimit) ?? new RequestProblem(problem(400, 'MALFORMED_REQUEST', error.message));
        return sendProblem(request, reply, refused.details, refused.headers);
      },
    },
  });
  const { app } = server;
  for (const method of OTHER_METHODS) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  app.setValidatorCompiler(validatorCompiler);
  // Answers are serialized by the routes (byte for byte what the services said); response schemas document them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'buffer' }, (request, raw: Buffer, done) => {
    // A POST that takes no body ignores an empty one, and refuses one that is not JSON.
    if (raw.length === 0 && !request.routeOptions.schema?.body) return done(null, undefined);
    try {
      done(null, parseJsonBody(raw));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser('*', (request, payload, done) => {
    if (request.routeOptions.schema?.body) return done(Object.assign(new Error('unsupported media type'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 }), undefined);
    payload.resume();
    payload.on('end', () => done(null, undefined));
  });
  // A service mounted at the port's root answers its own 404s there.
  if (!mounts.some((mount) => mount.prefix.replace(/\/+$/, '') === '')) {
    app.setNotFoundHandler((request, reply) => sendProblem(request, reply, problem(404, 'NOT_FOUND', `No service is mounted at ${request.url.split('?')[0]}.`)));
  }
  facade.pages.serve(app);
  for (const mount of mounts) {
    const prefix = mount.prefix.replace(/\/+$/, '');
    await app.register(
      async (instance) => {
        facade.pages.documents.set(mount.service, await mountService(instance, facade.tables[mount.service], prefix, facade));
      },
      { prefix },
    );
  }
  return server;
}
