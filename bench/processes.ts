/**
 * Servers a benchmark starts as processes of their own on its PostgreSQL: the platform as `npm start`
 * runs it (bin/start.ts, every part in one process), and a subgraph alone (bin/subgraph.ts), as
 * docs/SCALING.md deploys it beyond one process. The benchmark's own process is then only the
 * client: its requests, keys and bookkeeping cost the servers neither time nor memory, and a
 * server's memory is its own process's (/proc/<pid>/status).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { SERVICES, type ServiceName } from '../lib/config/services.js';
import { writeKekFile } from '../lib/keys/kek.js';
import { type Bench, freePort, processTree, REPO_ROOT } from './support.js';

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('error', reject);
    child.once('exit', () => resolve());
  });

/**
 * Starts a server process, stopped (SIGTERM) by bench.close(); resolves once `ready()` holds. Its
 * metrics listener takes a free port unless `env` names one: two gateways of one benchmark would
 * otherwise both ask for the gateway's default.
 */
export async function serverProcess(bench: Bench, name: string, command: string, args: string[], env: NodeJS.ProcessEnv, ready: () => Promise<boolean>): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, NODE_ENV: process.env.PROBE_NODE_ENV ?? 'production', METRICS_PORT: '0', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2000)));
  bench.defer(async () => {
    child.kill('SIGTERM');
    await exited(child);
  });
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) break;
    if (await ready().catch(() => false)) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not start: ${errors}`);
}

export const answersGraphql = (url: string) => async () => (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).ok;

/** The settings every server process of a benchmark shares: its database, key-encryption key and tokens. */
export interface ServerSettings {
  admin: string;
  writer?: string;
}

/** The file of each bench's key-encryption key, written once: the services seal their signing keys under it, so every process needs it. */
const kekFiles = new WeakMap<Bench, Promise<string>>();

async function sharedEnvironment(bench: Bench, tokens: ServerSettings): Promise<NodeJS.ProcessEnv> {
  let written = kekFiles.get(bench);
  if (!written) {
    const file = join(bench.dataDir, 'servers.kek');
    written = writeKekFile(file, bench.kek).then(() => file);
    kekFiles.set(bench, written);
  }
  const kekPath = await written;
  // Any free metrics port: replicas of one subgraph would share its default one.
  return {
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    DATABASE_URL: bench.databaseUrl,
    PASSPORT_KEK_FILE: kekPath,
    PASSPORT_ADMIN_TOKEN: tokens.admin,
    ...(tokens.writer && { PASSPORT_WRITER_TOKEN: tokens.writer }),
  };
}

export interface PlatformProcess {
  gatewayUrl: string;
  /** The REST base of each service on the facade. */
  facadeUrls: Record<ServiceName, string>;
  pid: number;
}

/** The whole platform as `npm start` runs it (bin/start.ts), on the bench's database, every port free. */
export async function startPlatformProcess(bench: Bench, tokens: ServerSettings): Promise<PlatformProcess> {
  const ports: Record<string, string> = { FACADE_PORT: String(await freePort()), GATEWAY_PORT: String(await freePort()) };
  for (const service of SERVICES) ports[`${service.toUpperCase()}_SUBGRAPH_PORT`] = String(await freePort());
  const gatewayUrl = `http://127.0.0.1:${ports.GATEWAY_PORT}/graphql`;
  const facadeUrls = Object.fromEntries(SERVICES.map((service) => [service, `http://127.0.0.1:${ports.FACADE_PORT}/${service}`])) as Record<ServiceName, string>;
  const env = { ...(await sharedEnvironment(bench, tokens)), ...ports, PASSPORT_DATA_DIR: join(bench.dataDir, 'platform') };
  // It places the platform's keys in the trust graph before the facade listens.
  const child = await serverProcess(bench, 'the platform (bin/start.ts)', process.execPath, ['bin/run.mjs', 'bin/start.ts'], env, async () => (await fetch(`${facadeUrls.trust}/healthz`)).ok);
  return { gatewayUrl, facadeUrls, pid: child.pid! };
}

export interface SubgraphProcess {
  url: string;
  pid: number;
}

/**
 * One subgraph alone (bin/subgraph.ts) on the bench's database, asking the rest of the graph at
 * `gatewayUrl`; `name` tells several of one service apart, `heapLimitMiB` sets V8's old-space limit
 * as docs/SCALING.md deploys a subgraph process (`NODE_OPTIONS=--max-old-space-size`); `env` adds
 * to its environment (LOG_LEVEL, say) and `nodeFlags` to node's command line.
 */
export async function startSubgraphProcess(
  bench: Bench,
  service: ServiceName,
  tokens: ServerSettings,
  gatewayUrl: string,
  { name = service, heapLimitMiB, env: extraEnv = {}, nodeFlags = [] }: { name?: string; heapLimitMiB?: number; env?: NodeJS.ProcessEnv; nodeFlags?: readonly string[] } = {},
): Promise<SubgraphProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const env = {
    ...(await sharedEnvironment(bench, tokens)),
    GATEWAY_URL: gatewayUrl,
    [`${service.toUpperCase()}_SUBGRAPH_PORT`]: String(port),
    PASSPORT_DATA_DIR: join(bench.dataDir, name),
    ...(heapLimitMiB !== undefined && { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${heapLimitMiB}`.trim() }),
    ...extraEnv,
  };
  // nodeFlags: e.g. --cpu-prof, which NODE_OPTIONS does not take.
  const child = await serverProcess(bench, `the ${name} subgraph`, process.execPath, [...nodeFlags, 'bin/run.mjs', 'bin/subgraph.ts', service], env, answersGraphql(url));
  return { url, pid: child.pid! };
}

/**
 * The gateway alone (bin/gateway.ts, as `npm run gateway` runs it) on `port`, over the subgraphs at
 * `subgraphUrls` (each a comma-separated list of replicas), on the bench's database (it recognises
 * the identity store's tokens there); `env` adds to its environment, `nodeFlags` to node's command line.
 */
export async function startGatewayProcess(
  bench: Bench,
  tokens: ServerSettings,
  {
    name = 'the gateway',
    port,
    dataDir,
    subgraphUrls,
    env: extraEnv = {},
    nodeFlags = [],
  }: { name?: string; port: number; dataDir: string; subgraphUrls: Record<ServiceName, string>; env?: NodeJS.ProcessEnv; nodeFlags?: readonly string[] },
): Promise<ChildProcess> {
  const env = {
    ...(await sharedEnvironment(bench, tokens)),
    GATEWAY_PORT: String(port),
    PASSPORT_DATA_DIR: dataDir,
    ...Object.fromEntries(SERVICES.map((service) => [`${service.toUpperCase()}_SUBGRAPH_URL`, subgraphUrls[service]])),
    ...extraEnv,
  };
  return serverProcess(bench, name, process.execPath, [...nodeFlags, 'bin/run.mjs', 'bin/gateway.ts'], env, answersGraphql(`http://127.0.0.1:${port}/graphql`));
}

/** Resident memory of a process now (VmRSS) and at most so far (VmHWM), in bytes. */
export function residentMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** PostgreSQL's memory: the proportional set size (Pss) of the postmaster and its backends (children of `parentPid`), so shared buffers count once. */
export function postgresMemory(parentPid: number): number {
  let bytes = 0;
  for (const pid of processTree(parentPid)) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      bytes += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // Gone meanwhile.
    }
  }
  return bytes;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * A lean HTTP/1.1 client on kept-alive connections, as load tools and servers calling servers
 * use: a request costs the client little (Node's fetch builds WHATWG Request, Headers and streams
 * for each), so a figure is the server's time rather than the client's.
 */
export class KeptAliveClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 16 });

  /** Sends a request and reads the whole answer; a JSON body is sent as such. */
  request(method: string, url: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
    return this.#send<string>(method, url, options, (incoming, done) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.once('end', () => done(Buffer.concat(chunks).toString('utf8')));
    });
  }

  /** Reads an answer piece by piece, keeping none of it: the status, headers and how many bytes came. */
  drain(url: string): Promise<{ status: number; headers: IncomingHttpHeaders; bytes: number }> {
    return this.#send<number>('GET', url, {}, (incoming, done) => {
      let bytes = 0;
      incoming.on('data', (chunk: Buffer) => (bytes += chunk.length));
      incoming.once('end', () => done(bytes));
    }).then(({ status, headers, text }) => ({ status, headers, bytes: text }));
  }

  #send<T>(
    method: string,
    url: string,
    { body, headers = {} }: { body?: string; headers?: Record<string, string> },
    read: (incoming: IncomingMessage, done: (value: T) => void) => void,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; text: T }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        url,
        { method, agent: this.#agent, headers: { ...(body !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }), ...headers } },
        (incoming) => {
          incoming.once('error', reject);
          read(incoming, (text) => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text }));
        },
      );
      outgoing.once('error', reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
