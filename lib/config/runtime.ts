/**
 * Configuration of a running platform, read from the environment (see the README's table). Every
 * value has a default that runs the whole system on one machine.
 */
import { dataDirectory, DEFAULT_EMBEDDED_PORT } from './database.js';
import { SERVICES, type ServiceName } from './services.js';

export interface ServiceMount {
  service: ServiceName;
  port: number;
  /** Path prefix on that port; `` when the service has the port to itself. */
  prefix: string;
}

export interface RuntimeConfig {
  host: string;
  dataDir: string;
  /** External PostgreSQL; the embedded one is used when absent. */
  databaseUrl?: string;
  embeddedPort: number;
  subgraphPorts: Record<ServiceName, number>;
  /** Instances of each subgraph the all-in-one stack runs (the first on its port, the others on free ones); the gateway spreads requests over them. */
  subgraphReplicas: number;
  gatewayPort: number;
  facadePort: number;
  mounts: ServiceMount[];
  /**
   * The public base URL of each service that has one configured (`<SERVICE>_PUBLIC_URL`, e.g.
   * `ISSUER_PUBLIC_URL=https://dpp.example.com/issuer`): what clients see behind a proxy, and what
   * every absolute URL the platform writes is made from (DESIGN §3, "Public identity"). A service
   * without one is named by where the facade serves it (public-urls.ts).
   */
  publicUrls: Partial<Record<ServiceName, string>>;
  introspection: boolean;
  bodyLimit: number;
  /** How long a client may take to send a whole request to the facade, the gateway or a subgraph (then 408). */
  requestTimeoutMs: number;
  /** Which GraphQL documents the gateway runs (TRUSTED_DOCUMENTS): any, or only registered ones. */
  trustedDocuments: TrustedDocumentsSetting;
  /** Answers at least this large are compressed for a client that accepts it (COMPRESSION_MIN_BYTES); undefined: off. */
  compressionMinBytes: number | undefined;
  /** Origins whose browser pages may call the facade and the gateway (CORS_ALLOWED_ORIGINS); `*` any, without credentials; none: same-origin only. */
  corsOrigins: string[];
  graphqlLimits: GraphqlLimits;
  /**
   * The gateway's credential to its subgraphs (`SUBGRAPH_SECRET`): sent with every request the
   * gateway makes to them; a subgraph takes mutations only with it. Required when HOST is not
   * loopback, as the subgraphs' ports are then reachable from elsewhere.
   */
  subgraphSecret?: string;
  /** Whether Prometheus metrics are kept and served (METRICS=on|off), and where (METRICS_HOST, METRICS_PORT); without a port, the part's default (lib/ops/metrics-listener.ts). */
  metrics: { enabled: boolean; host: string; port?: number };
  /** How long the gateway waits for each subgraph's answer (SUBGRAPH_TIMEOUT_MS, <SERVICE>_SUBGRAPH_TIMEOUT_MS), then answers without its fields. */
  subgraphTimeoutsMs: Record<ServiceName, number>;
  /** How long an open circuit of a subgraph instance refuses before one request probes it (SUBGRAPH_CIRCUIT_OPEN_MS). */
  subgraphCircuitOpenMs: number;
  /** How often the gateway reads the subgraphs' SDL for a changed supergraph (SUPERGRAPH_POLL_INTERVAL_MS); 0: only on SIGUSR2. */
  supergraphPollIntervalMs: number;
  /** On SIGTERM: how long readiness fails before the ports close (SHUTDOWN_DELAY_MS), and how long requests in flight are given to finish (SHUTDOWN_TIMEOUT_MS). */
  shutdown: { delayMs: number; timeoutMs: number };
  /** What each client of the facade and the gateway may ask in a window (RATE_LIMITS); undefined: off. */
  rateLimits?: RateLimits;
}

/** Who a rate limit is for: a request without a valid token, or a token's role (`reader`: a token that may read only, audiences' included). */
export const RATE_LIMIT_ROLES = ['anonymous', 'reader', 'writer', 'admin'] as const;
export type RateLimitRole = (typeof RATE_LIMIT_ROLES)[number];

/** A quota of requests per window, as the RateLimit-Policy header field states it (q, w). */
export interface RateLimitPolicy {
  quota: number;
  windowSeconds: number;
}

export interface RateLimits {
  policies: Record<RateLimitRole, RateLimitPolicy>;
  /** Whether clients on this machine's loopback (the platform's own parts, its operator, its tests and benchmarks) are counted too. */
  loopback: 'exempt' | 'counted';
}

/** RATE_LIMITS unset: a client may ask this much a minute; loopback is exempt. */
export const DEFAULT_RATE_LIMITS: RateLimits = {
  policies: {
    anonymous: { quota: 1200, windowSeconds: 60 },
    reader: { quota: 12_000, windowSeconds: 60 },
    writer: { quota: 12_000, windowSeconds: 60 },
    admin: { quota: 12_000, windowSeconds: 60 },
  },
  loopback: 'exempt',
};

/**
 * TRUSTED_DOCUMENTS: `off` (the default) runs any document; `on` only the platform's own documents
 * (lib/graphql/platform-documents.json); a comma-separated list of manifest files only those and
 * the platform's (gateway/trusted-documents.ts).
 */
export interface TrustedDocumentsSetting {
  only: boolean;
  /** Manifests beside the platform's: JSON objects of SHA-256 (hex) → document. */
  files: string[];
}

/** A setting that cannot be used, said in one sentence (bin/ prints it and exits 1). */
export class ConfigurationError extends Error {}

/** Whether an address is this machine only. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Limits the gateway puts on every operation, against abusive queries from the public. */
export interface GraphqlLimits {
  maxDepth: number;
  maxAliases: number;
  /** The most an operation may cost by the schema's @cost and @listSize (lib/graphql/cost.ts). */
  maxCost: number;
  maxTokens: number;
  /** Subscriptions open at once on one graphql-ws connection, and from one client address over both protocols (gateway/live/). */
  maxSubscriptionsPerConnection: number;
  maxSubscriptionsPerClient: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigurationError(`${name} must be a non-negative integer, not ${raw}.`);
  return value;
}

/** How long a client may take to send a whole request by default (then 408; lib/http/server-options.ts). */
export const REQUEST_TIMEOUT_MS = 20_000;

/** REQUEST_TIMEOUT_MS: at least a second; Node reads 0 as no limit at all, which a slow client would hold a socket with. */
function requestTimeout(env: NodeJS.ProcessEnv): number {
  const value = integer(env, 'REQUEST_TIMEOUT_MS', REQUEST_TIMEOUT_MS);
  if (value < 1000) throw new ConfigurationError(`REQUEST_TIMEOUT_MS must be at least 1000 (a second), not ${value}.`);
  return value;
}

/**
 * How long the gateway waits for a subgraph's whole answer unless configured: Apollo Router's
 * default, and as long as a subgraph's one SQL statement may run (DATABASE_STATEMENT_TIMEOUT_MS), so
 * that a subgraph that is working, however loaded, is rarely cut off; lower it where answers are quick.
 */
export const SUBGRAPH_TIMEOUT_MS = 30_000;
/** How long an open circuit refuses before it is probed, unless configured. */
export const SUBGRAPH_CIRCUIT_OPEN_MS = 5_000;
/** How often the gateway reads the subgraphs' SDL unless configured. */
export const SUPERGRAPH_POLL_INTERVAL_MS = 10_000;

/** SUBGRAPH_TIMEOUT_MS for every subgraph, <SERVICE>_SUBGRAPH_TIMEOUT_MS for one: at least 100 ms (0 would be no deadline at all). */
function subgraphTimeouts(env: NodeJS.ProcessEnv): Record<ServiceName, number> {
  const all = integer(env, 'SUBGRAPH_TIMEOUT_MS', SUBGRAPH_TIMEOUT_MS);
  return Object.fromEntries(
    SERVICES.map((service) => {
      const name = env[`${service.toUpperCase()}_SUBGRAPH_TIMEOUT_MS`] ? `${service.toUpperCase()}_SUBGRAPH_TIMEOUT_MS` : 'SUBGRAPH_TIMEOUT_MS';
      const value = integer(env, name, all);
      if (value < 100) throw new ConfigurationError(`${name} must be at least 100 (milliseconds), not ${value}.`);
      return [service, value];
    }),
  ) as Record<ServiceName, number>;
}

/** METRICS: `on` (the default) or `off`; off, the servers keep no metrics and serve no metrics listener (the probes stay). */
function metricsSwitch(env: NodeJS.ProcessEnv): boolean {
  const raw = env.METRICS?.trim().toLowerCase();
  if (raw === undefined || raw === '' || raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigurationError(`METRICS must be on or off, not ${env.METRICS}.`);
}

/**
 * CORS_ALLOWED_ORIGINS: origins as browsers write them (`https://app.example.com`, a port if not the
 * scheme's), separated by commas, or `*`. A path, a trailing slash or a mistyped scheme would never
 * equal a browser's Origin header, so it is refused at start rather than silently allowing nothing.
 */
function corsOrigins(env: NodeJS.ProcessEnv): string[] {
  const listed = (env.CORS_ALLOWED_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of listed) {
    let serialized: string | undefined;
    try {
      serialized = new URL(origin).origin;
    } catch {}
    if (origin !== '*' && serialized !== origin) {
      throw new ConfigurationError(`CORS_ALLOWED_ORIGINS must list origins like https://app.example.com (scheme, host, port if not the default; no path), or *, not ${origin}.`);
    }
  }
  return listed;
}

/**
 * RATE_LIMITS: `off`, or items separated by commas that change the defaults: `<role>=<quota>/<seconds>`
 * (anonymous, reader, writer, admin) and `loopback=exempt|counted`, e.g. `anonymous=600/60,loopback=counted`.
 */
function rateLimits(env: NodeJS.ProcessEnv): RateLimits | undefined {
  const raw = env.RATE_LIMITS?.trim();
  if (raw === undefined || raw === '') return DEFAULT_RATE_LIMITS;
  if (raw === 'off') return undefined;
  const limits: RateLimits = { policies: { ...DEFAULT_RATE_LIMITS.policies }, loopback: DEFAULT_RATE_LIMITS.loopback };
  for (const item of raw.split(',').map((part) => part.trim())) {
    const loopback = /^loopback=(exempt|counted)$/.exec(item);
    const policy = new RegExp(`^(${RATE_LIMIT_ROLES.join('|')})=(\\d+)/(\\d+)s?$`).exec(item);
    if (loopback) limits.loopback = loopback[1] as RateLimits['loopback'];
    else if (policy && Number(policy[2]) > 0 && Number(policy[3]) > 0) limits.policies[policy[1] as RateLimitRole] = { quota: Number(policy[2]), windowSeconds: Number(policy[3]) };
    else {
      throw new ConfigurationError(
        `RATE_LIMITS must be off, or items like anonymous=1200/60 (a role, then requests per window in seconds, both above 0) and loopback=exempt|counted separated by commas; ${JSON.stringify(item)} is neither.`,
      );
    }
  }
  return limits;
}

/** TRUSTED_DOCUMENTS: off, on, or manifest files (TrustedDocumentsSetting). */
function trustedDocuments(env: NodeJS.ProcessEnv): TrustedDocumentsSetting {
  const raw = env.TRUSTED_DOCUMENTS?.trim() ?? '';
  if (raw === '' || raw.toLowerCase() === 'off') return { only: false, files: [] };
  if (raw.toLowerCase() === 'on') return { only: true, files: [] };
  return {
    only: true,
    files: raw
      .split(',')
      .map((file) => file.trim())
      .filter(Boolean),
  };
}

/** COMPRESSION_MIN_BYTES: the smallest answer compressed (1024 unless set), or `off`. */
function compressionMinBytes(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.COMPRESSION_MIN_BYTES?.trim() ?? '';
  if (raw.toLowerCase() === 'off') return undefined;
  if (raw !== '' && !/^\d+$/.test(raw)) throw new ConfigurationError(`COMPRESSION_MIN_BYTES must be a number of bytes or off, not ${raw}.`);
  return raw === '' ? 1024 : Number(raw);
}

/** `<SERVICE>_PUBLIC_URL`: an absolute http(s) URL without query or fragment; kept without a trailing slash. */
function publicUrls(env: NodeJS.ProcessEnv): Partial<Record<ServiceName, string>> {
  const urls: Partial<Record<ServiceName, string>> = {};
  for (const service of SERVICES) {
    const name = `${service.toUpperCase()}_PUBLIC_URL`;
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {}
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new ConfigurationError(`${name} must be an absolute http or https URL without query, fragment or credentials, e.g. https://dpp.example.com/${service}, not ${raw}.`);
    }
    urls[service] = url.href.replace(/\/+$/, '');
  }
  return urls;
}

export function loadRuntimeConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const facadePort = integer(env, 'FACADE_PORT', 3000);
  const gatewayPort = integer(env, 'GATEWAY_PORT', 4000);
  const subgraphPorts = Object.fromEntries(SERVICES.map((service, i) => [service, integer(env, `${service.toUpperCase()}_SUBGRAPH_PORT`, gatewayPort + 1 + i)])) as Record<ServiceName, number>;
  const mounts = SERVICES.map((service): ServiceMount => {
    const ownPort = env[`${service.toUpperCase()}_REST_PORT`];
    // A service given its own port has it to itself by default; otherwise it shares the facade's port under /<service>.
    const prefix = env[`${service.toUpperCase()}_REST_PREFIX`] ?? (ownPort ? '' : `/${service}`);
    if (prefix !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix)) throw new ConfigurationError(`${service.toUpperCase()}_REST_PREFIX must be empty or like /name, not ${prefix}.`);
    return { service, port: ownPort ? integer(env, `${service.toUpperCase()}_REST_PORT`, facadePort) : facadePort, prefix };
  });
  const host = env.HOST ?? '127.0.0.1';
  const limits = rateLimits(env);
  const subgraphSecret = env.SUBGRAPH_SECRET || undefined;
  if (subgraphSecret !== undefined && subgraphSecret.length < 16) throw new ConfigurationError('SUBGRAPH_SECRET must be at least 16 characters long.');
  if (!isLoopback(host) && !subgraphSecret) {
    throw new ConfigurationError(
      `HOST=${host} makes the subgraphs' ports reachable from other machines: set SUBGRAPH_SECRET to a random string of 16 or more characters (e.g. \`openssl rand -hex 32\`), so that they take writes only from the gateway.`,
    );
  }
  return {
    host,
    ...(subgraphSecret ? { subgraphSecret } : {}),
    dataDir: dataDirectory(env),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    embeddedPort: integer(env, 'EMBEDDED_PG_PORT', DEFAULT_EMBEDDED_PORT),
    subgraphPorts,
    subgraphReplicas: Math.max(1, integer(env, 'SUBGRAPH_REPLICAS', 1)),
    gatewayPort,
    facadePort,
    mounts,
    publicUrls: publicUrls(env),
    introspection: (env.GRAPHQL_INTROSPECTION ?? 'true') !== 'false',
    bodyLimit: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024),
    requestTimeoutMs: requestTimeout(env),
    corsOrigins: corsOrigins(env),
    compressionMinBytes: compressionMinBytes(env),
    trustedDocuments: trustedDocuments(env),
    metrics: { enabled: metricsSwitch(env), host: env.METRICS_HOST || '127.0.0.1', ...(env.METRICS_PORT ? { port: integer(env, 'METRICS_PORT', 0) } : {}) },
    subgraphTimeoutsMs: subgraphTimeouts(env),
    subgraphCircuitOpenMs: integer(env, 'SUBGRAPH_CIRCUIT_OPEN_MS', SUBGRAPH_CIRCUIT_OPEN_MS),
    supergraphPollIntervalMs: integer(env, 'SUPERGRAPH_POLL_INTERVAL_MS', SUPERGRAPH_POLL_INTERVAL_MS),
    shutdown: { delayMs: integer(env, 'SHUTDOWN_DELAY_MS', 0), timeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000) },
    ...(limits ? { rateLimits: limits } : {}),
    graphqlLimits: {
      maxDepth: integer(env, 'GRAPHQL_MAX_DEPTH', 15),
      maxAliases: integer(env, 'GRAPHQL_MAX_ALIASES', 60),
      // About 2 s of CPU: a unit of cost is about 10 µs (lib/graphql/cost.ts).
      maxCost: integer(env, 'GRAPHQL_MAX_COST', 200_000),
      maxTokens: integer(env, 'GRAPHQL_MAX_TOKENS', 5_000),
      maxSubscriptionsPerConnection: integer(env, 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CONNECTION', 100),
      maxSubscriptionsPerClient: integer(env, 'GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT', 5_000),
    },
  };
}
