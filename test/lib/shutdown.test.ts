/**
 * A server's shutdown as a load balancer's kept-alive connection meets it (lib/server/shutdown.ts):
 * the request in flight when the close begins is answered, and its connection, idle once answered,
 * is closed then, so the close ends with it rather than SHUTDOWN_TIMEOUT_MS later (the balancer would
 * otherwise keep the connection open for its own idle timeout, and the process wait for the cut).
 */
import { Agent, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { publicServerOptions } from '../../lib/http/server-options.js';
import { closeGracefully, shutdownRefusal } from '../../lib/server/shutdown.js';

const SHUTDOWN_TIMEOUT_MS = 8_000;
const agents: Agent[] = [];
afterEach(() => {
  for (const agent of agents.splice(0)) agent.destroy();
});

describe('closeGracefully', () => {
  it('closes a kept-alive connection once its request in flight is answered, not at SHUTDOWN_TIMEOUT_MS', async () => {
    const app = Fastify(publicServerOptions({ bodyLimit: 1024 }));
    await app.register(shutdownRefusal, { server: 'gateway' });
    let answer: (() => void) | undefined;
    app.get('/slow', () => new Promise<string>((resolve) => (answer = () => resolve('answered'))));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;

    const agent = new Agent({ keepAlive: true });
    agents.push(agent);
    let socketClosed: Promise<void> = new Promise(() => {});
    const response = new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const request = get({ host: '127.0.0.1', port, path: '/slow', agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
      });
      request.on('socket', (socket) => (socketClosed = new Promise((resolve) => socket.once('close', () => resolve()))));
      request.on('error', reject);
    });
    // The request has reached its handler when the close begins.
    for (let waited = 0; !answer && waited < 100; waited += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    const closed = closeGracefully(app, SHUTDOWN_TIMEOUT_MS).then(() => Date.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 200));
    answer?.();

    expect(await response).toEqual({ status: 200, body: 'answered', connection: 'keep-alive' });
    expect(await closed).toBeLessThan(SHUTDOWN_TIMEOUT_MS / 2);
    // The server ended the connection (the agent would have kept it).
    await socketClosed;
  }, 20_000);
});
