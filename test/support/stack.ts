/**
 * The whole platform for a test file: its own database on the shared PostgreSQL, every server on a
 * free loopback port, and tokens of each role. startTestStack starts one for the file alone;
 * sharedTestStack gives the one the worker's files that only touch data of their own share.
 */
import { AccessTokens, hashToken } from '../../lib/auth/tokens.js';
import { loadRuntimeConfig } from '../../lib/config/runtime.js';
import { KeyEncryptionKeys } from '../../lib/keys/kek.js';
import type { ServiceName } from '../../lib/config/services.js';
import { startStack, type RunningStack } from '../../bin/stack.js';
import { createTestDatabase } from './database.js';

/** The key-encryption key of every stack a test process starts, so a restart opens its keys. */
export const TEST_KEK = KeyEncryptionKeys.generate("the tests' key-encryption key (in memory)");

/**
 * Every server on loopback, on the port the system chooses as it listens (a port picked ahead may be
 * taken by another process before it is bound; the start prints the URLs).
 */
export const LOOPBACK_PORTS_AT_LISTEN = {
  HOST: '127.0.0.1',
  FACADE_PORT: '0',
  GATEWAY_PORT: '0',
  TRUST_SUBGRAPH_PORT: '0',
  REGISTRY_SUBGRAPH_PORT: '0',
  ISSUER_SUBGRAPH_PORT: '0',
  ARCHIVE_SUBGRAPH_PORT: '0',
  METRICS_PORT: '0',
} as const;

export const TOKENS = { admin: 'test-admin-token-0123456789', writer: 'test-writer-token-0123456789' } as const;

export const testAccessTokens = () =>
  new AccessTokens([
    { name: 'test-admin', role: 'admin', sha256: hashToken(TOKENS.admin) },
    { name: 'test-writer', role: 'writer', sha256: hashToken(TOKENS.writer) },
  ]);

export interface TestStack {
  stack: RunningStack;
  databaseUrl: string;
  /** The REST base URL of a service. */
  base(service: ServiceName): string;
  /** A REST request with JSON in and out; `as` picks the token. */
  rest(service: ServiceName, path: string, init?: RestInit): Promise<RestResponse>;
  graphql<T = any>(query: string, variables?: Record<string, unknown>, as?: keyof typeof TOKENS): Promise<{ data?: T; errors?: any[] }>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface RestInit {
  method?: string;
  body?: unknown;
  as?: keyof typeof TOKENS;
  headers?: Record<string, string>;
}

export interface RestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/**
 * Stacks this worker has started (or is starting) and not stopped. A worker runs many files in one
 * process (isolate: false), so a stack a file leaves running, e.g. one whose start outlived a timed-out
 * beforeAll, would hold its ports and connections while the next files run: stopLeftoverStacks,
 * run after each file (test/support/leftover-stacks.ts), stops it. The worker's shared stack
 * (sharedTestStack) is not among them: it outlives files.
 */
const unstopped = new Set<Promise<TestStack>>();

export async function stopLeftoverStacks(): Promise<void> {
  const leftovers = [...unstopped];
  unstopped.clear();
  await Promise.allSettled(leftovers.map(async (starting) => (await starting).stop()));
}

export interface TestStackOptions {
  databaseUrl?: string;
  env?: NodeJS.ProcessEnv;
  kek?: KeyEncryptionKeys;
  /** The configured tokens (a tokens file's, loaded); TOKENS' by default. */
  tokens?: AccessTokens;
}

export function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const starting: Promise<TestStack> = openTestStack(options, () => unstopped.delete(starting));
  unstopped.add(starting);
  starting.catch(() => unstopped.delete(starting));
  return starting;
}

/** A stack many files use at once: they may read and write data of their own on it, not stop or restart it. */
export type SharedTestStack = Omit<TestStack, 'restart' | 'stop'>;

let shared: Promise<TestStack> | undefined;

/**
 * The stack of this worker's files that only touch data of their own (ids of their own, no tampering
 * by SQL, no whole-database assertions, no process.env or configuration of their own): the first call
 * in a worker starts it with the default options on a database of its own, later calls return it. A
 * stack start costs ~1.5 CPU-s and ~8 new PostgreSQL connections; the worker's files run one after
 * another in one module graph (isolate: false), so one start serves them all. No file stops it, and
 * stopLeftoverStacks leaves it alone: it lives as long as the worker, which vitest ends with SIGTERM
 * once the run's files are done (before the global teardown stops PostgreSQL), so its servers and
 * connections go with the process.
 */
export function sharedTestStack(): Promise<SharedTestStack> {
  if (!shared) {
    const starting = openTestStack({}, () => {});
    // A start that failed is not kept: the next file tries again rather than inherit the error.
    starting.catch(() => {
      if (shared === starting) shared = undefined;
    });
    shared = starting;
  }
  return shared;
}

async function openTestStack(options: TestStackOptions, stopped: () => void): Promise<TestStack> {
  const kek = options.kek ?? TEST_KEK;
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const config = {
    ...loadRuntimeConfig({ ...LOOPBACK_PORTS_AT_LISTEN, ...options.env }),
    databaseUrl,
  };
  const tokens = options.tokens ?? testAccessTokens();
  let stack = await startStack({ config, tokens, kek });
  const handle: TestStack = {
    get stack() {
      return stack;
    },
    databaseUrl,
    base: (service) => stack.facade.baseUrls[service],
    async rest(service, path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.as) headers.authorization = `Bearer ${TOKENS[init.as]}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${stack.facade.baseUrls[service]}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async graphql(query, variables = {}, as) {
      const response = await fetch(stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: any; errors?: any[] };
    },
    async restart() {
      await stack.stop();
      stack = await startStack({ config, tokens, kek });
    },
    stop: () => {
      stopped();
      return stack.stop();
    },
  };
  return handle;
}
