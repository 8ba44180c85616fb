/**
 * Schema changes without a restart (issue 45 item 7): the gateway reads its subgraphs' SDL every
 * SUPERGRAPH_POLL_INTERVAL_MS (or on SIGUSR2) and switches to the new supergraph while queries run,
 * none of them failing; a schema that does not compose keeps the old supergraph, and a log line and
 * graphql_gateway_supergraph_checks_total say why. The changing subgraph is a stand-in of its own
 * (test/support/stand-in-subgraph.ts) beside the shared stack's four, served in this process (the
 * gateway meets it over HTTP alone): its replicas are killed, every connection cut, and served again
 * after a while with the new schema, one after the other, as a rolling deploy restarts them.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { SERVICES } from '../../lib/config/services.js';
import { Operations } from '../../lib/ops/operations.js';
import { startGateway, type RunningGateway } from '../../gateway/index.js';
import { createModel, createPassport } from '../issuer/support.js';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { type ServedStandIn, serveStandIn, type StandInSchema } from '../support/stand-in-subgraph.js';

let platform: SharedTestStack;
let passportId: string;

/**
 * What a restart of a stand-in replica leaves it down for: about what a process of it took to start on
 * a quiet machine, so that queries meet a replica that is gone for a while, not only for an instant.
 */
const RESTART_MS = 500;

/** A stand-in replica, killed and served again on its port with another schema. */
class StandIn {
  #served: ServedStandIn | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  static async start(schema: StandInSchema): Promise<StandIn> {
    const standIn = new StandIn();
    await standIn.#serve(schema);
    running.push(standIn);
    return standIn;
  }

  async #serve(schema: StandInSchema): Promise<void> {
    this.#served = await serveStandIn(schema, this.port);
    this.port = this.#served.port;
  }

  async restart(schema: StandInSchema): Promise<void> {
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, RESTART_MS));
    await this.#serve(schema);
  }

  async stop(): Promise<void> {
    const served = this.#served;
    this.#served = undefined;
    await served?.kill();
  }
}

/** A whole answer that ran: its data, and what it cost (the gateway adds `extensions.cost` to every answer that ran). */
const answered = (data: unknown) => ({ data, extensions: { cost: { estimated: expect.any(Number), actual: expect.any(Number), max: expect.any(Number) } } });
const running: StandIn[] = [];
const gateways: RunningGateway[] = [];

/** A gateway over the shared stack's subgraphs and the stand-in `notices` at `instances`. */
async function gatewayWith(instances: StandIn[], operations: Operations, pollIntervalMs: number): Promise<RunningGateway> {
  const config = loadRuntimeConfig({});
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    subgraphs: [
      ...SERVICES.map((name) => ({ name, url: platform.stack.subgraphUrls[name] })),
      { name: 'notices', url: instances[0]!.url, replicas: instances.map((instance) => instance.url), timeoutMs: 5000 },
    ],
    introspection: false,
    bodyLimit: config.bodyLimit,
    limits: config.graphqlLimits,
    subgraphCircuitOpenMs: 500,
    supergraphPollIntervalMs: pollIntervalMs,
    operations,
  });
  gateways.push(gateway);
  return gateway;
}

async function graphql(gateway: RunningGateway, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  return (await response.json()) as { data?: any; errors?: any[] };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const checks = async (operations: Operations, outcome: string) =>
  Number(new RegExp(`graphql_gateway_supergraph_checks_total\\{server="gateway",outcome="${outcome}"\\} (\\d+)`).exec(await operations.metrics.exposition())?.[1] ?? 0);

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, 'supergraph-updates-model');
  passportId = (await createPassport(platform, 'supergraph-updates-model')).passport_id;
}, 120_000);

afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.stop();
  for (const standIn of running.splice(0)) await standIn.stop();
  vi.restoreAllMocks();
});

describe('a subgraph deployed with a changed schema', () => {
  it('is served without a restart once its replicas run the new schema, while queries run and none fails', async () => {
    const replicas = [await StandIn.start('v1'), await StandIn.start('v1')];
    const operations = new Operations();
    const gateway = await gatewayWith(replicas, operations, 200);
    expect((await graphql(gateway, '{ noticeVersion }')).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');

    // Clients ask across the platform and the stand-in all the time.
    let load = true;
    const answers: { data?: any; errors?: any[] }[] = [];
    const clients = Array.from({ length: 4 }, async () => {
      while (load) answers.push(await graphql(gateway, 'query ($id: ID!) { passport(id: $id) { id } notice }', { id: passportId }));
    });

    // A rolling deploy: the first replica with the new schema; the gateway reads it there and switches.
    await replicas[0]!.restart('v2');
    await until(() => gateway.supergraphSdl.includes('noticeVersion'), 'the supergraph has the new field');
    // As a rolling deploy waits for the restarted instance to be healthy before the next: its circuit,
    // opened while it was down, closed again (else the other's restart leaves no instance to ask).
    const circuits = async () => ((await (await fetch(new URL('/readyz', gateway.url))).json()) as { circuits?: Record<string, string> }).circuits;
    await until(async () => (await circuits())?.['notices#1'] === 'closed', 'the first replica is asked again');
    await replicas[1]!.restart('v2');
    await until(async () => (await graphql(gateway, '{ noticeVersion }')).data?.noticeVersion === 2, 'the new field answers');
    const afterwards = answers.length;
    await until(() => answers.length > afterwards + 20, 'queries run on the new supergraph');
    load = false;
    await Promise.all(clients);

    expect(answers.length).toBeGreaterThan(40);
    expect(answers.filter((answer) => answer.errors)).toEqual([]);
    for (const answer of answers) expect(answer.data).toEqual({ passport: { id: passportId }, notice: expect.stringMatching(/^v[12]$/) });
    expect(answers.at(-1)!.data.notice).toBe('v2');
    expect(await checks(operations, 'updated')).toBeGreaterThanOrEqual(1);
  }, 90_000);

  it('that does not compose leaves the old supergraph in place, and a log line and a metric say why (looked for on SIGUSR2)', async () => {
    const standIn = await StandIn.start('v1');
    const operations = new Operations();
    // No polling: the documented signal makes the gateway look.
    const gateway = await gatewayWith([standIn], operations, 0);
    const before = gateway.supergraphSdl;

    await standIn.restart('conflict');
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: any[]) => {
      lines.push(String(chunk));
      return write(chunk, ...rest);
    });
    // Unheard, the signal would end this process: the gateway listens for it.
    expect(process.listenerCount('SIGUSR2')).toBeGreaterThan(0);
    process.kill(process.pid, 'SIGUSR2');
    await until(async () => (await checks(operations, 'composition_failed')) === 1, 'the check counted');

    const logged = lines.map((line) => JSON.parse(line)).find((line) => line.service === 'passport-gateway' && line.msg.startsWith('supergraph kept'));
    expect(logged).toMatchObject({ level: 'error' });
    expect(logged.msg).toMatch(/^supergraph kept: the subgraphs' new schemas do not compose: supergraph composition failed:\n- .*Query\.passport/);
    expect(gateway.supergraphSdl).toBe(before);
    // The old supergraph still serves: passport is the issuer's, and the stand-in answers its own field.
    expect(await graphql(gateway, 'query ($id: ID!) { passport(id: $id) { id } notice }', { id: passportId })).toEqual(answered({ passport: { id: passportId }, notice: 'conflict' }));
    // The same schemas again are not composed again, nor logged again; the check still counts.
    expect(await gateway.checkSupergraph()).toBe('composition_failed');
    expect(lines.filter((line) => line.includes('supergraph kept'))).toHaveLength(1);
  }, 90_000);
});
