/**
 * The facade's pages beside the services: the verification page (verify-page.ts), the problem page
 * every problem type links to (problem-page.ts), and each service's OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceMount } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';
import { problem } from '../lib/problem.js';
import type { SendProblem } from './problems.js';
import { OTHER_METHODS } from './service-mount.js';
import { verifyPageHandler } from './verify-page.js';

export interface FacadePages {
  /** Each mounted service's OpenAPI document, added as its routes are registered; any port serves every service's. */
  documents: Map<ServiceName, () => unknown>;
  serve(app: FastifyInstance): void;
}

export function facadePages(options: { gatewayUrl: string; mounts: readonly ServiceMount[]; publicUrls(): Record<ServiceName, string>; sendProblem: SendProblem }): FacadePages {
  const { sendProblem } = options;
  const verifyPage = verifyPageHandler({ gatewayUrl: options.gatewayUrl });
  const documents = new Map<ServiceName, () => unknown>();
  // Rendered (markdown-it loaded) when first asked for: most starts never serve it.
  let problems: Promise<string> | undefined;
  return {
    documents,
    serve(app) {
      // The verification page (verify-page.ts) answers its own paths; others under /verify are 404s.
      for (const url of ['/verify', '/verify/*']) {
        app.get(url, { schema: { hide: true } as never }, async (request, reply) => {
          const page = await verifyPage(request.url.split('?')[0]!, request.headers['if-none-match']);
          if (!page) return sendProblem(request, reply, problem(404, 'NOT_FOUND', `The verification page has no file at ${request.url.split('?')[0]}.`));
          return reply.code(page.status).headers(page.headers).send(page.body);
        });
        app.route({
          method: OTHER_METHODS.filter((method) => method !== 'GET' && method !== 'HEAD'),
          url,
          schema: { hide: true } as never,
          handler: (request, reply) =>
            sendProblem(request, reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on the verification page; allowed: GET, HEAD.`), { allow: 'GET, HEAD' }),
        });
      }
      app.get('/docs/problems', { schema: { hide: true } as never }, async (_request, reply) => {
        problems ??= import('./problem-page.js').then(({ problemPage }) => problemPage());
        return reply
          .type('text/html; charset=utf-8')
          .headers({ 'content-security-policy': "default-src 'none'", 'cache-control': 'public, max-age=3600' })
          .send(await problems);
      });
      app.get('/docs/:service/openapi.json', { schema: { hide: true } as never }, async (request, reply) => {
        const service = (request.params as { service: string }).service as ServiceName;
        const mount = options.mounts.find((candidate) => candidate.service === service);
        const document = documents.get(service);
        if (!mount || !document) return sendProblem(request, reply, problem(404, 'NOT_FOUND', `No service is named ${service}.`));
        const served = { ...(document() as Record<string, unknown>), servers: [{ url: options.publicUrls()[service] }] };
        return reply.type('application/openapi+json').send(Buffer.from(JSON.stringify(served)));
      });
    },
  };
}
