/**
 * What every server of a process is built with (platform-server.ts), one key per edge feature an
 * operator sets; apart from the server's code, so that a process reads it before it loads that code.
 */
import type { RuntimeConfig } from '../config/runtime.js';
import type { Operations } from '../ops/operations.js';

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
}

/** The edge options of every server of a process, from its configuration (a subgraph's without the CORS origins). */
export function edgeOptions(config: Pick<RuntimeConfig, 'bodyLimit' | 'requestTimeoutMs' | 'compressionMinBytes'> & Partial<Pick<RuntimeConfig, 'corsOrigins'>>, operations?: Operations): EdgeOptions {
  return {
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: config.requestTimeoutMs,
    compressionMinBytes: config.compressionMinBytes,
    ...(config.corsOrigins ? { corsOrigins: config.corsOrigins } : {}),
    ...(operations ? { operations } : {}),
  };
}
