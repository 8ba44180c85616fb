/**
 * How every part of the platform runs as a process (`npm start`'s whole stack, `npm run
 * facade|gateway|subgraph`): one configuration and one Operations for the process, its metrics
 * listener, what it serves, its signals and exit codes, and the one sentence that says why a start failed.
 */
import { openPlatformIdentity, type PlatformIdentity } from '../lib/auth/authentication.js';
import { type AccessTokens, loadAccessTokens } from '../lib/auth/tokens.js';
import { loadOidcConfig, type OidcConfig } from '../lib/config/oidc.js';
import { ConfigurationError, loadRuntimeConfig, type RuntimeConfig } from '../lib/config/runtime.js';
import { deployMigrations } from '../lib/db/migrate.js';
import { EmbeddedPostgresError, explainDatabaseFailure } from '../lib/db/postgres.js';
import { KeyCustodyError } from '../lib/keys/kek.js';
import { DEFAULT_METRICS_PORTS, serveMetrics, type MetricsListener } from '../lib/ops/metrics-listener.js';
import { Operations } from '../lib/ops/operations.js';
import { shutDownTracing, tracesProtocol, tracingEnabled } from '../lib/ops/tracing.js';
import { edgeOptions, type EdgeOptions } from '../lib/server/edge-options.js';

/** What a part's servers are started with, made once for its process. */
export interface PartContext {
  config: RuntimeConfig;
  /** The process's metrics and shutdown state, shared by every server it runs. */
  operations: Operations;
  /** What every server of the process is built with (lib/server/platform-server.ts). */
  edge: EdgeOptions;
}

export interface RunningPart {
  operations: Operations;
  /** The part's Prometheus endpoint (METRICS_HOST, METRICS_PORT, else the part's own default port). */
  metrics: MetricsListener;
  /** Stops what the part started, then its metrics listener. */
  stop(): Promise<void>;
}

/**
 * Opens a part of the platform in this process: its Operations and metrics listener, then what
 * `start` starts on them. A start that fails stops the listener before the failure goes on.
 */
export async function openPart<T extends { stop(): Promise<void> }>(
  config: RuntimeConfig,
  part: keyof typeof DEFAULT_METRICS_PORTS,
  start: (context: PartContext) => Promise<T>,
): Promise<Omit<T, 'stop'> & RunningPart> {
  const operations = new Operations({ shutdownTimeoutMs: config.shutdown.timeoutMs, metrics: config.metrics.enabled });
  const metrics = await serveMetrics(operations.metrics, { host: config.metrics.host, port: config.metrics.port ?? DEFAULT_METRICS_PORTS[part] });
  const edge = edgeOptions(config, operations);
  let started: T;
  try {
    started = await start({ config, operations, edge });
  } catch (error) {
    await edge.rateLimiting?.allowance.close();
    await metrics.stop();
    throw error;
  }
  return {
    ...started,
    operations,
    metrics,
    async stop() {
      await started.stop();
      await edge.rateLimiting?.allowance.close();
      await metrics.stop();
    },
  };
}

/** What a part run on its own recognises callers by. */
export interface OwnIdentity {
  tokens: AccessTokens;
  /** The OpenID provider whose access tokens are taken (PASSPORT_OIDC_*), if one is configured. */
  oidc: OidcConfig | undefined;
  identity: PlatformIdentity;
}

/**
 * The identity store at `url` (its schema migrated first), then the configured tokens and the OpenID
 * provider, for a facade or subgraph run on its own (`npm start` opens one for its six servers).
 */
export async function openOwnIdentity(url: string): Promise<OwnIdentity> {
  await deployMigrations('identity', url);
  const tokens = loadAccessTokens();
  const oidc = loadOidcConfig();
  return { tokens, oidc, identity: openPlatformIdentity(tokens, url, oidc) };
}

export interface ProcessPart<T extends RunningPart> {
  /** Starts the part (openPart) from the configuration. */
  start(config: RuntimeConfig): Promise<T>;
  /** What it serves, printed once it is started. */
  lines(running: T, config: RuntimeConfig): string[];
  /** The database it starts on, once known: named (without its password) when it is what stops the start. */
  databaseUrl?(config: RuntimeConfig): string | undefined;
}

/**
 * Runs a part as this process: the configuration from the environment, the part started, stopped on
 * a signal, and what it serves printed. A start that cannot be made ends with the one sentence that
 * says why, and exit code 1.
 */
export async function runPart<T extends RunningPart>(part: ProcessPart<T>): Promise<T> {
  const config = configOrExit();
  const running = await part.start(config).catch((error: unknown) => endOnStartFailure(error, part.databaseUrl?.(config)));
  // Listening for signals before saying so: a signal in between would end the process without stopping what started.
  stopOnSignal(running, config.shutdown);
  console.log(part.lines(running, config).join('\n'));
  return running;
}

/**
 * Stops a running part cleanly on Ctrl-C, SIGTERM or SIGHUP (its terminal closed), once: its readiness
 * fails first, for SHUTDOWN_DELAY_MS (a load balancer's time to stop sending to it), then its ports
 * close to new connections while requests in flight finish; after SHUTDOWN_TIMEOUT_MS more it exits
 * whatever is left.
 */
function stopOnSignal({ stop, operations }: RunningPart, shutdown: RuntimeConfig['shutdown']): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      operations.startDraining();
      console.log(`\n${signal}: not ready any more; stopping${shutdown.delayMs ? ` in ${shutdown.delayMs} ms` : ''}…`);
      await new Promise((resolve) => setTimeout(resolve, shutdown.delayMs));
      setTimeout(() => {
        console.error(`Still stopping ${shutdown.timeoutMs + 5000} ms after the shutdown began (SHUTDOWN_TIMEOUT_MS + 5 s): exiting.`);
        process.exit(1);
      }, shutdown.timeoutMs + 5000).unref();
      stop()
        .then(shutDownTracing)
        .then(
          () => process.exit(0),
          (error: unknown) => {
            console.error(error);
            process.exit(1);
          },
        );
    });
  }
}

/** The configuration from the environment, or the end of the start with the one sentence that says what is wrong. */
function configOrExit(): RuntimeConfig {
  try {
    const config = loadRuntimeConfig();
    if (tracingEnabled()) tracesProtocol();
    return config;
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    console.error(`Cannot start: ${error.message}`);
    process.exit(1);
  }
}

/**
 * Ends a start that its database (external or embedded), its signing keys or a setting (a port in use) stop with the one
 * sentence that says why (the database named without its password), instead of a driver's stack trace; other errors go on.
 */
function endOnStartFailure(error: unknown, databaseUrl: string | undefined): never {
  const database = databaseUrl && explainDatabaseFailure(error, databaseUrl);
  if (database) {
    console.error(database);
    process.exit(1);
  }
  if (error instanceof ConfigurationError) {
    console.error(`Cannot start: ${error.message}`);
    process.exit(1);
  }
  if (error instanceof EmbeddedPostgresError || error instanceof KeyCustodyError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
