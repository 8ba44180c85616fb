/**
 * The Hive Gateway command docs/ONE-GRAPH.md gives, run as written (with the supergraph file our
 * gateway composed) against this stack's subgraphs: it listens on loopback, answers the README's
 * cross-service query as our gateway does, and refuses what ours refuses (depth, cost, tokens and
 * aliases in the same words with the same codes, nothing logged as an error; introspection and
 * field suggestions when GRAPHQL_INTROSPECTION=false); it serves the platform's subscriptions by the
 * subgraphs' own (lib/graphql/subgraph-subscriptions.ts), delivering what our gateway delivers. The
 * stack and Hive Gateway share a SUBGRAPH_SECRET, as a deployment beyond loopback must: Hive sends it
 * as the gateway's credential, so the subgraphs take its mutations.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBenchTools } from '../support/bench-tools.js';
import { freePort } from '../support/free-port.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';
import { appendEvent, PAYLOADS } from '../issuer/support.js';
import { collector } from './live-support.js';
import { createModel, passportsAcrossServices, trustTheIssuerOnce } from './support.js';
import { processEnv } from '../support/environment.js';

const MODEL = 'battery-hive';
let platform: TestStack;
const SECRET = 'hive-subgraph-secret-0123456789';
let directory: string;
let hive: ChildProcess | undefined;
let hiveUrl: string;
let log = '';
let ids: string[];

/** The documented command's arguments, its supergraph path replaced by `file`. */
async function documentedCommand(file: string): Promise<string[]> {
  const markdown = await readFile('docs/ONE-GRAPH.md', 'utf8');
  const line = /^hive-gateway (supergraph \.data\/supergraph\.graphql .*)$/m.exec(markdown);
  expect(line, 'docs/ONE-GRAPH.md gives the hive-gateway command on a line of its own').not.toBeNull();
  return line![1]!
    .trim()
    .split(/\s+/)
    .map((argument) => (argument === '.data/supergraph.graphql' ? file : argument));
}

async function ask(url: string, query: string, token?: string) {
  const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query }) });
  return (await response.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
}

beforeAll(async () => {
  platform = await startTestStack({ env: { SUBGRAPH_SECRET: SECRET } });
  await createModel(platform, MODEL);
  await trustTheIssuerOnce(platform);
  ids = await passportsAcrossServices(platform, MODEL, 2);
  directory = await mkdtemp(join(tmpdir(), 'hive-'));
  const file = join(directory, 'supergraph.graphql');
  await writeFile(file, platform.stack.gateway.supergraphSdl);
  const port = await freePort();
  hiveUrl = `http://127.0.0.1:${port}/graphql`;
  // The settings ours takes; HOST is left unset, as an operator would.
  // LOG_LEVEL as an operator leaves it (the test run sets warn for its own stacks): Hive then says where it listens.
  const env = processEnv({ GATEWAY_PORT: String(port), GRAPHQL_INTROSPECTION: 'false', LOG_LEVEL: 'info', SUBGRAPH_SECRET: SECRET });
  delete env.HOST;
  // Hive Gateway is a benchmark tool, installed apart from the project's own packages: here on first use.
  await ensureBenchTools();
  const binary = join('bench', 'tools', 'node_modules', '.bin', 'hive-gateway');
  hive = spawn(binary, await documentedCommand(file), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Its first start loads and compiles its whole tree: on a busy 2-core machine that took over 20 s.
  // It is asked once it says where it listens (LOG_LEVEL info), not over and over while it loads.
  const deadline = Date.now() + 120_000;
  await new Promise<void>((resolve) => {
    const heard = (chunk: Buffer) => {
      log += chunk.toString();
      if (/Listening on/.test(log)) resolve();
    };
    hive!.stdout!.on('data', heard);
    hive!.stderr!.on('data', heard);
    hive!.once('exit', () => resolve());
    setTimeout(resolve, 120_000).unref();
  });
  for (;;) {
    try {
      if ((await ask(hiveUrl, '{ __typename }')).data) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || hive.exitCode !== null) throw new Error(`Hive Gateway did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 600_000);
afterAll(async () => {
  if (hive && hive.exitCode === null) {
    const exited = new Promise((resolve) => hive!.once('exit', resolve));
    hive.kill('SIGTERM');
    await exited;
  }
  if (directory) await rm(directory, { recursive: true, force: true });
  await platform?.stop();
});

describe('Hive Gateway as docs/ONE-GRAPH.md configures it', () => {
  it('listens on loopback by default', () => {
    expect(log).toMatch(/Listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(log).not.toMatch(/0\.0\.0\.0/);
  });

  it('answers the README’s cross-service query as our gateway does', async () => {
    const readme = await readFile('README.md', 'utf8');
    const example = /## One graph[\s\S]*?```graphql\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(example).toContain('passport(id: "…")');
    const query = example.replace('"…"', JSON.stringify(ids[0]));
    const ours = await ask(platform.stack.gateway.graphqlUrl, query);
    expect(ours.errors).toBeUndefined();
    expect(ours.data.passport.snapshots).toHaveLength(1);
    expect(ours.data.passport.signingKeys[0].standingAtFirstUse.standing).toBe('valid');
    expect(await ask(hiveUrl, query)).toEqual(ours);
  });

  it('runs a mutation on a subgraph that takes writes only from the gateway (SUBGRAPH_SECRET): Hive sends its credential', async () => {
    const mutation = 'mutation { upsertTrustNode(input: { id: "hive-root", kind: "root" }) { created } }';
    // Without the credential the subgraph refuses it (what Hive answered before it sent one).
    const direct = await ask(platform.stack.subgraphUrls.trust, mutation, TOKENS.admin);
    expect(direct.errors?.[0]?.extensions?.code).toBe('GATEWAY_CREDENTIAL_REQUIRED');
    const theirs = await ask(hiveUrl, mutation, TOKENS.admin);
    expect([theirs.errors, theirs.data]).toEqual([undefined, { upsertTrustNode: { created: true } }]);
  });

  it('refuses a query over a limit as ours does: the same message naming the limit and its setting, the same code', async () => {
    let deep = 'id';
    for (let level = 0; level < 8; level += 1) deep = `id passport { id snapshots { ${deep} } }`;
    let costly = 'id';
    for (let level = 0; level < 6; level += 1) costly = `id passport { id snapshots { ${costly} } }`;
    const refused = {
      GRAPHQL_MAX_DEPTH: `{ snapshot(id: "x") { ${deep} } }`,
      GRAPHQL_MAX_COST: `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: snapshot(id: "x") { ${costly} }`).join(' ')} }`,
      GRAPHQL_MAX_TOKENS: `{ passport(id: "x") { ${'id '.repeat(5_100)}} }`,
      GRAPHQL_MAX_ALIASES: `{ ${Array.from({ length: 61 }, (_, i) => `a${i}: passport(id: "x") { id }`).join(' ')} }`,
    };
    const codes: Record<string, string> = {};
    for (const [setting, query] of Object.entries(refused)) {
      const ours = await ask(platform.stack.gateway.graphqlUrl, query);
      // Each query is over the one limit it is named for (and no other), at our gateway.
      expect(ours.errors, setting).toHaveLength(1);
      expect(ours.errors![0]!.message, setting).toContain(`(setting ${setting})`);
      const theirs = await ask(hiveUrl, query);
      expect(theirs, setting).toEqual(ours);
      expect(JSON.stringify(theirs), setting).not.toMatch(/Did you mean/);
      codes[setting] = theirs.errors![0]!.extensions!.code!;
    }
    expect(codes).toEqual({
      GRAPHQL_MAX_DEPTH: 'GRAPHQL_VALIDATION_FAILED',
      GRAPHQL_MAX_COST: 'GRAPHQL_VALIDATION_FAILED',
      GRAPHQL_MAX_TOKENS: 'GRAPHQL_PARSE_FAILED',
      GRAPHQL_MAX_ALIASES: 'GRAPHQL_VALIDATION_FAILED',
    });
    const fine = await ask(hiveUrl, `{ ${Array.from({ length: 60 }, (_, i) => `a${i}: passport(id: "x") { id }`).join(' ')} }`);
    expect(fine.errors).toBeUndefined();
    // A refusal is the client's mistake: nothing logged as an error (Hive logs failures as ERR).
    expect(stripVTControlCharacters(log)).not.toMatch(/\bERR\b/);
  });

  it('refuses introspection when GRAPHQL_INTROSPECTION=false', async () => {
    const introspection = await ask(hiveUrl, '{ __schema { types { name } } }');
    expect(introspection.data).toBeUndefined();
    expect(introspection.errors?.[0]?.message).toMatch(/introspection/i);
    expect(introspection.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('suggests no field names with introspection off', async () => {
    const misspelt = await ask(hiveUrl, '{ pasport(id: "x") { id } }');
    expect(misspelt.errors?.[0]?.message).toMatch(/Cannot query field "pasport"/);
    expect(JSON.stringify(misspelt)).not.toMatch(/Did you mean/);
  });

  it("serves a passport's events by the issuer's own subscription, with fields of other subgraphs, as our gateway delivers them", async () => {
    const query = `subscription($id: ID!) {
      passportEvents(passportId: $id) { cursor seq type passport { id typeRecord { id kind } snapshots { sha512 } } }
    }`;
    type Delivered = { cursor: string; seq: number; passport: { id: string; typeRecord: { id: string }; snapshots: { sha512: string }[] } };
    const follow = (url: string) => {
      const client = createClient({ url, singleConnection: false, retryAttempts: 0 });
      const got = collector<Delivered>('passportEvents');
      const dispose = client.subscribe({ query, variables: { id: ids[1] } }, got.sink);
      return {
        got,
        end: () => {
          dispose();
          client.dispose();
        },
      };
    };
    const [theirs, ours] = [follow(hiveUrl), follow(platform.stack.gateway.graphqlUrl)];
    try {
      // The replay: the passport's one event, then one appended while both follow.
      await theirs.got.until(1);
      await ours.got.until(1);
      expect((await appendEvent(platform, ids[1]!, 'ObjectEvent', PAYLOADS.ObjectEvent!())).status).toBe(201);
      await theirs.got.until(2);
      await ours.got.until(2);
      expect(theirs.got.errors).toEqual([]);
      expect(theirs.got.items.map((event) => [event.seq, event.cursor])).toEqual([
        [0, '0'],
        [1, '1'],
      ]);
      expect(theirs.got.items[1]!.passport).toMatchObject({ id: ids[1], typeRecord: { id: MODEL }, snapshots: [{ sha512: expect.stringMatching(/^[0-9a-f]{128}$/) }] });
      expect(theirs.got.items).toEqual(ours.got.items);
    } finally {
      theirs.end();
      ours.end();
    }
  });
});
