/**
 * What every server of a process is built with (platform-server.ts), one key per edge feature an
 * operator sets; apart from the server's code, so that a process reads it before it loads that code.
 */
import type { AccessTokens, Authenticator } from '../auth/tokens.js';
import { baseDatabaseUrl } from '../config/database.js';
import type { RuntimeConfig } from '../config/runtime.js';
import type { Operations } from '../ops/operations.js';
import type { RateLimiting } from './rate-limits.js';
import { SharedAllowance } from './shared-allowance.js';

/** What every server of a process is built with: made once where the process starts (edgeOptions) and handed down. */
export interface EdgeOptions {
  /** Largest request body in bytes (BODY_LIMIT_BYTES; a subgraph takes a multiple of it). */
  bodyLimit: number;
  /** How long a client may take to send a whole request (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** Answers at least this large are compressed for a client that accepts it (COMPRESSION_MIN_BYTES, compression.ts); undefined: none. */
  compressionMinBytes?: number | undefined;
  /** Origins whose pages may call the server from a browser (CORS_ALLOWED_ORIGINS; cross-origin.ts); none by default. */
  corsOrigins?: readonly string[];
  /** The process's metrics and shutdown state; a server built without them has its own. */
  operations?: Operations;
  /** The facade's and the gateway's rate limits (RATE_LIMITS), one allowance for the process; absent: off. */
  rateLimiting?: RateLimiting;
  /** The configured access tokens (the platform's own requests carry a credential made of them). */
  tokens?: AccessTokens;
  /** The authenticator chain, by which the rate limits know a client that authenticated a moment ago; absent: the configured tokens only. */
  authenticator?: Authenticator;
}

/** The edge options of every server of a process, from its configuration (a subgraph's without the CORS origins). */
export function edgeOptions(
  config: Pick<RuntimeConfig, 'bodyLimit' | 'requestTimeoutMs' | 'compressionMinBytes'> & Partial<Pick<RuntimeConfig, 'corsOrigins' | 'rateLimits' | 'databaseUrl' | 'dataDir'>>,
  operations?: Operations,
): EdgeOptions {
  return {
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: config.requestTimeoutMs,
    compressionMinBytes: config.compressionMinBytes,
    ...(config.corsOrigins ? { corsOrigins: config.corsOrigins } : {}),
    ...(operations ? { operations } : {}),
    ...(config.rateLimits ? { rateLimiting: { limits: config.rateLimits, allowance: processAllowance(config) } } : {}),
  };
}

/** The process's shared allowance, on the platform's database (the embedded one is found once it has started). */
function processAllowance(config: Partial<Pick<RuntimeConfig, 'databaseUrl' | 'dataDir'>>): SharedAllowance {
  return new SharedAllowance(() => config.databaseUrl ?? baseDatabaseUrl(config.dataDir ? { PASSPORT_DATA_DIR: config.dataDir } : {}));
}
