/**
 * A subgraph that hangs, resets or is paused costs a client at most the subgraph's deadline (issue 45
 * item 1): the fields it owns are null with SUBGRAPH_UNAVAILABLE, the other subgraphs' fields answer,
 * and the REST facade answers 504 (deadline) or 503 (connection, open circuit) problem+json with
 * Retry-After. Each instance has a circuit breaker that opens after repeated failures and probes back;
 * a query that fails to connect is sent once more to another replica, a mutation never.
 *
 * The misbehaving instance is a real process (test/support/faulty-proxy.mjs) in front of the shared
 * stack's real subgraph; the gateway and facade under test are started over it. Times are asserted
 * only with wide margins, to show that the deadline is what ended the wait.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface, type Interface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { Operations } from '../../lib/ops/operations.js';
import { startGateway, type RunningGateway } from '../../gateway/index.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import { startFacade, type RunningFacade } from '../../rest-facade/server.js';
import { appendEvent, createModel, createPassport, objectEvent } from '../issuer/support.js';
import { processEnv } from '../support/environment.js';
import { sharedTestStack, testAccessTokens, TOKENS, type SharedTestStack } from '../support/stack.js';

/** The archive's deadline here; the default is 30 s. */
const DEADLINE_MS = 1500;
/** How long an open circuit waits before its probe here (the default is 5 s): longer than the checks made while it is open take on a loaded machine. */
const CIRCUIT_OPEN_MS = 6000;
/**
 * Room for a loaded machine (the suite runs beside other work): an answer within the deadline and
 * this is bounded by the deadline, where without one it would never come.
 */
const MARGIN_MS = 15_000;
/** A whole answer that ran: its data, and what it cost (the gateway adds `extensions.cost` to every answer that ran). */
const answered = (data: unknown) => ({ data, extensions: { cost: { estimated: expect.any(Number), actual: expect.any(Number), max: expect.any(Number) } } });

let platform: SharedTestStack;
let passportId: string;
let snapshotId: string;
/** The passport as the issuer answers it. */
let passport: { id: string; status: string };

/** A faulty-proxy process in front of a real subgraph. */
class FaultyInstance {
  readonly url: string;
  private constructor(
    readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: Interface,
    port: number,
  ) {
    this.url = `http://127.0.0.1:${port}/`;
  }

  static async start(target: string): Promise<FaultyInstance> {
    const child = spawn(process.execPath, ['test/support/faulty-proxy.mjs', target], { env: processEnv() });
    const lines = createInterface({ input: child.stdout });
    try {
      const [first] = (await once(lines, 'line')) as [string];
      return new FaultyInstance(child, lines, Number(/^listening (\d+)$/.exec(first)![1]));
    } catch (error) {
      // Not left running when it did not say where it listens.
      child.kill();
      throw error;
    }
  }

  /** `pass`, `hang` or `reset`, from the next connection on. */
  async mode(mode: 'pass' | 'hang' | 'reset'): Promise<void> {
    const answered = once(this.lines, 'line');
    this.child.stdin.write(`${mode}\n`);
    expect((await answered)[0]).toBe(`mode ${mode}`);
  }

  async stop(): Promise<void> {
    this.child.kill('SIGCONT');
    this.child.stdin.end();
    if (this.child.exitCode === null) await once(this.child, 'exit');
  }
}

interface Faced {
  gateway: RunningGateway;
  facade: RunningFacade;
  operations: Operations;
}
const started: (Faced | FaultyInstance)[] = [];

/** A gateway and facade over the shared stack's subgraphs, a subgraph given in `instances` served by those instances instead. */
async function faced(instances: Partial<Record<ServiceName, string[]>> = {}): Promise<Faced> {
  const config = loadRuntimeConfig({});
  const operations = new Operations();
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    // The schema is read from the first instance that gives it.
    subgraphs: SERVICES.map((name) => {
      const urls = instances[name] ?? [platform.stack.subgraphUrls[name]];
      return { name, url: urls[0]!, replicas: urls, timeoutMs: DEADLINE_MS };
    }),
    introspection: false,
    bodyLimit: config.bodyLimit,
    limits: config.graphqlLimits,
    subgraphCircuitOpenMs: CIRCUIT_OPEN_MS,
    supergraphPollIntervalMs: 0,
    operations,
  });
  const facade = await startFacade({
    host: '127.0.0.1',
    mounts: SERVICES.map((service) => ({ service, port: 0, prefix: `/${service}` })),
    tables: ROUTE_TABLES,
    gatewayUrl: gateway.graphqlUrl,
    tokens: testAccessTokens(),
    bodyLimit: config.bodyLimit,
    operations,
  });
  const made = { gateway, facade, operations };
  started.push(made);
  return made;
}

async function faulty(subgraph: ServiceName): Promise<FaultyInstance> {
  const instance = await FaultyInstance.start(platform.stack.subgraphUrls[subgraph]);
  started.push(instance);
  return instance;
}

/** The cross-service read: the passport from the issuer, its snapshot from the archive. */
const PASSPORT_AND_SNAPSHOT = 'query ($passport: ID!, $snapshot: ID!) { passport(id: $passport) { id status } snapshot(id: $snapshot) { id passportId } }';

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const begun = performance.now();
  const value = await work();
  return { value, ms: performance.now() - begun };
}

async function graphql(at: Faced, query: string, variables: Record<string, unknown> = {}, as?: keyof typeof TOKENS) {
  const response = await fetch(at.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}

const crossRead = (at: Faced) => timed(() => graphql(at, PASSPORT_AND_SNAPSHOT, { passport: passportId, snapshot: snapshotId }));

async function rest(at: Faced, service: ServiceName, path: string) {
  const response = await fetch(`${at.facade.baseUrls[service]}${path}`);
  return { status: response.status, headers: response.headers, body: await response.text() };
}

async function readiness(at: Faced) {
  const response = await fetch(new URL('/readyz', at.gateway.url));
  return { status: response.status, body: (await response.json()) as { circuits?: Record<string, string> } };
}

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, 'subgraph-failures-model');
  passportId = (await createPassport(platform, 'subgraph-failures-model')).passport_id;
  expect((await appendEvent(platform, passportId, 'ObjectEvent', objectEvent())).status).toBe(201);
  const snapshot = await platform.rest('archive', '/snapshots', { as: 'writer', body: { passport_id: passportId } });
  expect(snapshot.status, snapshot.text).toBe(201);
  snapshotId = snapshot.body.id;
  passport = (await platform.graphql('query ($id: ID!) { passport(id: $id) { id status } }', { id: passportId })).data.passport;
}, 120_000);

afterEach(async () => {
  for (const each of started.splice(0).reverse()) {
    if (each instanceof FaultyInstance) await each.stop();
    else {
      await each.facade.stop();
      await each.gateway.stop();
    }
  }
});

describe('a subgraph that stops answering', () => {
  it('accepting connections and never answering costs a client the deadline: its fields null with SUBGRAPH_UNAVAILABLE, the others answered; REST 504 with Retry-After', async () => {
    const archive = await faulty('archive');
    const at = await faced({ archive: [archive.url] });
    const healthy = await crossRead(at);
    expect(healthy.value.body).toEqual(answered({ passport: passport, snapshot: { id: snapshotId, passportId } }));

    await archive.mode('hang');
    const { value, ms } = await crossRead(at);
    expect(value.status).toBe(200);
    expect(value.body.data).toEqual({ passport: passport, snapshot: null });
    expect(value.body.errors).toEqual([
      expect.objectContaining({
        message: `The archive subgraph did not answer within ${DEADLINE_MS} ms.`,
        extensions: expect.objectContaining({ code: 'SUBGRAPH_UNAVAILABLE', serviceName: 'archive', problem: expect.objectContaining({ status: 504, reason: 'deadline', retry_after: 5 }) }),
      }),
    ]);
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    const timedRest = await timed(() => rest(at, 'archive', `/snapshots/${snapshotId}`));
    expect(timedRest.value.status).toBe(504);
    expect(timedRest.value.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(timedRest.value.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(timedRest.value.body)).toMatchObject({ status: 504, code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'archive', title: 'Gateway Timeout' });
    expect(timedRest.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    // The issuer's own routes answer as ever.
    expect((await rest(at, 'issuer', `/passports/${passportId}`)).status).toBe(200);
  }, 60_000);

  it('stopped with SIGSTOP costs a client the deadline, and answers again once continued', async () => {
    const archive = await faulty('archive');
    const at = await faced({ archive: [archive.url] });
    expect((await crossRead(at)).value.body.errors).toBeUndefined();

    archive.child.kill('SIGSTOP');
    const { value, ms } = await crossRead(at);
    expect(value.body.data).toEqual({ passport: passport, snapshot: null });
    expect(value.body.errors?.[0]?.extensions).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE', problem: { status: 504 } });
    expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);

    archive.child.kill('SIGCONT');
    const again = await crossRead(at);
    expect(again.value.body).toEqual(answered({ passport: passport, snapshot: { id: snapshotId, passportId } }));
  }, 60_000);
});

describe('a subgraph that resets connections', () => {
  it('is answered at once as 503; after repeated failures its circuit opens (readiness, metrics), then a probe closes it once it answers', async () => {
    const archive = await faulty('archive');
    const at = await faced({ archive: [archive.url] });
    expect((await readiness(at)).body.circuits).toEqual({ trust: 'closed', registry: 'closed', issuer: 'closed', archive: 'closed' });

    await archive.mode('reset');
    const reasons: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const { value } = await crossRead(at);
      expect(value.body.data?.passport).toEqual(passport);
      expect(value.body.data?.snapshot).toBeNull();
      expect(value.body.errors?.[0]?.extensions).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE', problem: { status: 503 } });
      // A reset, not the deadline, ended each (its reason says which).
      reasons.push(value.body.errors![0].extensions.problem.reason);
    }
    // Five failures in a row open the circuit: the sixth request is not sent.
    expect(reasons).toEqual(['connection', 'connection', 'connection', 'connection', 'connection', 'circuit_open']);

    const ready = await readiness(at);
    expect(ready.status).toBe(503);
    expect(ready.body.circuits).toMatchObject({ archive: 'open', issuer: 'closed' });
    const metrics = await at.operations.metrics.exposition();
    expect(metrics).toContain('graphql_gateway_subgraph_circuit_state{server="gateway",subgraph="archive",instance="archive",state="open"} 1');
    expect(metrics).toMatch(/graphql_gateway_subgraph_fetch_errors_total\{server="gateway",subgraph="archive",error_type="ECONNRESET"\} 5/);
    expect(metrics).toMatch(/graphql_gateway_subgraph_fetch_errors_total\{server="gateway",subgraph="archive",error_type="circuit_open"\} 1/);

    const refused = await rest(at, 'archive', `/snapshots/${snapshotId}`);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE', reason: 'circuit_open' });

    // Back: after CIRCUIT_OPEN_MS one request probes the instance, and its answer closes the circuit.
    await archive.mode('pass');
    await new Promise((resolve) => setTimeout(resolve, CIRCUIT_OPEN_MS + 100));
    expect((await crossRead(at)).value.body).toEqual(answered({ passport: passport, snapshot: { id: snapshotId, passportId } }));
    expect((await readiness(at)).body.circuits).toMatchObject({ archive: 'closed' });
    expect(await at.operations.metrics.exposition()).toContain('graphql_gateway_subgraph_circuit_state{server="gateway",subgraph="archive",instance="archive",state="closed"} 1');
  }, 60_000);

  it('with another replica, every query is answered: one that failed to connect is sent once more to the other', async () => {
    const archive = await faulty('archive');
    await archive.mode('reset');
    const at = await faced({ archive: [archive.url, platform.stack.subgraphUrls.archive] });
    // Every other fetch goes to the faulty instance first: its sixth opens its circuit.
    for (let i = 0; i < 12; i += 1) {
      const { value } = await crossRead(at);
      expect(value.body).toEqual(answered({ passport: passport, snapshot: { id: snapshotId, passportId } }));
    }
    const metrics = await at.operations.metrics.exposition();
    expect(metrics).toMatch(/graphql_gateway_subgraph_fetch_retries_total\{server="gateway",subgraph="archive"\} [1-9]/);
    expect((await readiness(at)).body.circuits).toMatchObject({ 'archive#1': 'open', 'archive#2': 'closed' });
  }, 60_000);

  it('never sends a mutation again: it fails with SUBGRAPH_UNAVAILABLE and nothing is written', async () => {
    const registry = await faulty('registry');
    await registry.mode('reset');
    // The first request goes to the first instance, the faulty one.
    const at = await faced({ registry: [registry.url, platform.stack.subgraphUrls.registry] });
    const id = `subgraph-failures-${process.pid}-${Date.now()}`;
    const created = await graphql(at, 'mutation ($id: ID!) { createRegistryRecord(input: { kind: "item", id: $id, body: {} }) { id } }', { id }, 'writer');
    expect(created.body.data).toBeNull();
    expect(created.body.errors?.[0]?.extensions).toMatchObject({ code: 'SUBGRAPH_UNAVAILABLE', problem: { status: 503, reason: 'connection' } });
    expect(await at.operations.metrics.exposition()).not.toMatch(/graphql_gateway_subgraph_fetch_retries_total\{[^}]*\} [1-9]/);
    const read = await platform.graphql('query ($id: ID!) { registryRecord(id: $id, kind: "item") { id } }', { id });
    expect(read.errors?.[0]?.extensions?.problem?.status ?? 200).not.toBe(503);
    expect(read.data?.registryRecord ?? null).toBeNull();
  }, 60_000);
});
