/**
 * PostgreSQL stopped under a running platform, as an operator's maintenance or a crash does it: every
 * REST path and the gateway answer 503 `DATABASE_UNAVAILABLE` with Retry-After (never a 500), a write
 * refused meanwhile leaves nothing behind, and everything answers again once PostgreSQL is back,
 * without a restart of the platform.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type RunningPostgres } from '../../lib/db/embedded-postgres.js';
import { freePort } from '../support/free-port.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let dataDir: string;
let port: number;
let postgres: RunningPostgres;
let platform: TestStack;

/** A read and a write of each service, the admin log, and a passport id that does not exist. */
const PATHS: { service: 'trust' | 'registry' | 'issuer' | 'archive'; path: string; as?: 'writer' | 'admin'; body?: unknown }[] = [
  { service: 'trust', path: '/graph' },
  { service: 'trust', path: '/nodes', as: 'writer', body: { id: 'outage-node', kind: 'witness' } },
  { service: 'trust', path: '/revocations' },
  { service: 'trust', path: '/admin/log', as: 'admin' },
  { service: 'registry', path: '/models/battery-passport' },
  { service: 'registry', path: '/items' },
  { service: 'issuer', path: '/passports/00000000-0000-4000-8000-000000000000' },
  { service: 'archive', path: '/snapshots' },
];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'passport-outage-'));
  port = await freePort();
  postgres = await startEmbeddedPostgres({ dataDir, port });
  platform = await startTestStack({ databaseUrl: postgres.url });
});

afterAll(async () => {
  await platform?.stop();
  await postgres?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('PostgreSQL stopped under a running platform', () => {
  it('answers every path with 503 DATABASE_UNAVAILABLE and Retry-After, changes nothing, and recovers when it returns', async () => {
    for (const { service, path, as } of PATHS.filter((entry) => !entry.body)) {
      expect((await platform.rest(service, path, as ? { as } : {})).status, `${service}${path} before the outage`).toBeLessThan(500);
    }

    await postgres.stop();
    for (const { service, path, as, body } of PATHS) {
      const answer = await platform.rest(service, path, { ...(as ? { as } : {}), ...(body ? { body } : {}) });
      expect({ path: `${service}${path}`, status: answer.status, code: answer.body?.code }).toEqual({ path: `${service}${path}`, status: 503, code: 'DATABASE_UNAVAILABLE' });
      expect(answer.headers.get('content-type')).toBe('application/problem+json');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(answer.text).not.toMatch(/ECONNREFUSED|postgres(ql)?:\/\/|at .*\.ts:\d+/i);
    }
    const graphql = await platform.graphql('{ trustGraph { nodes { id } } }');
    expect(graphql.errors?.[0]?.extensions?.code).toBe('DATABASE_UNAVAILABLE');

    postgres = await startEmbeddedPostgres({ dataDir, port });
    // The pools reconnect on their own; the first requests may still meet a connection that died.
    let graph: Awaited<ReturnType<TestStack['rest']>> | undefined;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      graph = await platform.rest('trust', '/graph');
      if (graph.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(graph!.status).toBe(200);
    expect(graph!.body.nodes.map((node: { id: string }) => node.id)).not.toContain('outage-node');
    for (const { service, path, as, body } of PATHS) {
      const answer = await platform.rest(service, path, { ...(as ? { as } : {}), ...(body ? { body } : {}) });
      expect(answer.status, `${service}${path} after the outage`).toBeLessThan(500);
    }
  });
});
