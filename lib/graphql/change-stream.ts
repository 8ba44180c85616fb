/**
 * `GET /changes` on a subgraph with subscriptions: its change notices (lib/db/change-feed.ts) as
 * Server-Sent Events, for the gateway, which holds one such stream per service and wakes the
 * subscriptions a notice concerns (gateway/live/). Each notice is an event named by its feed, its data
 * `key cursor at`, then the append's `traceparent` when it was traced; `resync` says the service (re)started listening, so notices may have been missed.
 */
import type { FastifyInstance } from 'fastify';
import type { ChangeListener } from '../db/change-feed.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import { problem } from '../problem.js';
import { GATEWAY_CREDENTIAL_HEADER, gatewayCredentialCheck } from './gateway-credential.js';

export const CHANGES_PATH = '/changes';

/** A comment line this often keeps proxies and the gateway's reader from taking the stream for dead. */
const HEARTBEAT_MS = 15_000;

export function serveChangeStream(app: FastifyInstance, changes: ChangeListener, gatewaySecret: string | undefined): void {
  const open = new Set<() => void>();
  const fromGateway = gatewaySecret === undefined ? undefined : gatewayCredentialCheck(gatewaySecret);
  // Shutdown ends the streams at once: the gateway reconnects to another replica, or to this one restarted.
  app.addHook('preClose', (done) => {
    for (const end of open) end();
    done();
  });
  app.get(CHANGES_PATH, (request, reply) => {
    if (fromGateway && !fromGateway(request.headers[GATEWAY_CREDENTIAL_HEADER])) {
      const detail = "This subgraph's change notices are the gateway's; subscribe at the gateway.";
      return reply
        .code(403)
        .type(PROBLEM_MEDIA_TYPE)
        .send(JSON.stringify(problem(403, 'GATEWAY_CREDENTIAL_REQUIRED', detail)));
    }
    reply.hijack();
    const { raw } = reply;
    raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-request-id': request.id });
    raw.write(': change notices\n\n');
    const heartbeat = setInterval(() => raw.write(': \n\n'), HEARTBEAT_MS);
    const unsubscribe = changes.subscribe({
      onNotice: ({ feed, key, cursor, at, trace }) => raw.write(`event: ${feed}\ndata: ${key} ${cursor} ${at}${trace ? ` ${trace}` : ''}\n\n`),
      onResync: () => raw.write('event: resync\ndata: \n\n'),
    });
    const end = () => {
      clearInterval(heartbeat);
      unsubscribe();
      open.delete(end);
      raw.end();
    };
    open.add(end);
    raw.on('close', end);
  });
}
