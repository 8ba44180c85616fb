/**
 * Liveness and readiness of all six servers under `npm start`'s one process: live and ready on a
 * fresh platform; PostgreSQL stopped, every readiness probe fails within 5 s naming what is not ready
 * (problem+json, no secret) while liveness holds; PostgreSQL back, every probe is ready within 5 s.
 * A postmaster that takes no new connection while the pools' open ones still answer is not ready either.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES } from '../../lib/config/services.js';
import { OwnPostgres } from '../support/own-postgres.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let postgres: OwnPostgres;
let platform: TestStack;

beforeAll(async () => {
  postgres = await OwnPostgres.start('probes');
  platform = await startTestStack({ databaseUrl: postgres.url });
});

afterAll(async () => {
  await platform?.stop();
  await postgres?.remove();
});

/** Each server's origin, by the name its `server` label has. */
function servers(): Record<'facade' | 'gateway' | (typeof SERVICES)[number], string> {
  const { stack } = platform;
  return {
    facade: stack.facade.url,
    gateway: stack.gateway.url,
    ...(Object.fromEntries(SERVICES.map((service) => [service, new URL(stack.subgraphUrls[service]).origin])) as Record<(typeof SERVICES)[number], string>),
  };
}

async function probe(origin: string, path: '/livez' | '/readyz') {
  const response = await fetch(`${origin}${path}`);
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** Polls every server's readiness until each answers `status`; the milliseconds it took. */
async function untilEvery(status: number, timeout = 5_000): Promise<number> {
  const started = Date.now();
  await expect
    .poll(async () => Object.fromEntries(await Promise.all(Object.entries(servers()).map(async ([name, origin]) => [name, (await probe(origin, '/readyz')).status]))), {
      timeout,
      interval: 100,
    })
    .toEqual(Object.fromEntries(Object.keys(servers()).map((name) => [name, status])));
  return Date.now() - started;
}

describe('probes on all six servers', () => {
  it('answers live and ready with small JSON beside the signed /healthz', async () => {
    for (const [name, origin] of Object.entries(servers())) {
      const live = await probe(origin, '/livez');
      expect({ name, status: live.status, body: JSON.parse(live.text) }).toEqual({ name, status: 200, body: { status: 'live' } });
      const ready = await probe(origin, '/readyz');
      expect({ name, status: ready.status, type: ready.type }).toEqual({ name, status: 200, type: 'application/json' });
      expect(JSON.parse(ready.text)).toMatchObject({ status: 'ready', server: name });
    }
    expect(JSON.parse((await probe(servers().gateway, '/readyz')).text).checks).toEqual([...SERVICES]);
    expect(JSON.parse((await probe(servers().facade, '/readyz')).text).checks).toEqual(['gateway']);
    // The specification's signed health document is unchanged.
    const health = await platform.rest('trust', '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ service: 'trust', status: 'ok', signature: expect.any(String) });
  });

  it('turns not ready within 5 s of PostgreSQL going away, names why without secrets, and ready within 5 s of its return', async () => {
    await postgres.stop();
    const down = await untilEvery(503);
    for (const [name, origin] of Object.entries(servers())) {
      expect((await probe(origin, '/livez')).status, `${name} stays live`).toBe(200);
      const ready = await probe(origin, '/readyz');
      expect(ready.type).toBe('application/problem+json');
      expect(ready.text).not.toMatch(/postgres(ql)?:\/\/|password|ECONNREFUSED|127\.0\.0\.1:\d+/i);
      const body = JSON.parse(ready.text);
      expect(body).toMatchObject({ status: 503, code: 'NOT_READY', server: name });
      const why = { facade: 'gateway', gateway: 'trust' }[name] ?? 'database';
      expect(Object.keys(body.unmet), name).toContain(why);
    }
    expect(JSON.parse((await probe(servers().issuer, '/readyz')).text).unmet).toEqual({ database: 'PostgreSQL does not answer' });

    await postgres.restart();
    const up = await untilEvery(200);
    console.log(`readiness: 503 everywhere ${down} ms after PostgreSQL stopped, 200 everywhere ${up} ms after it started again`);
  });

  // A postmaster that takes no new connection (stopped here; hung, or out of connection slots, alike) while
  // the backends of the pools' open connections still answer: requests needing one more connection wait.
  it('turns not ready when PostgreSQL takes no new connection though the pools still answer, and ready once it takes them again', async () => {
    const postmaster = Number((await readFile(join(postgres.clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(postmaster, 'SIGSTOP');
    let down: number;
    try {
      // At most one new connection every 5 s is tried (1.5 s to answer), so within about 7 s.
      down = await untilEvery(503, 10_000);
      // The pool's query answered; only the new connection failed.
      expect(JSON.parse((await probe(servers().issuer, '/readyz')).text).unmet).toEqual({ database: 'PostgreSQL takes no new connection' });
    } finally {
      process.kill(postmaster, 'SIGCONT');
    }
    const up = await untilEvery(200, 10_000);
    console.log(`readiness: 503 everywhere ${down} ms after the postmaster stopped taking connections, 200 everywhere ${up} ms after it took them again`);
  });
});
