import { ConfigurationError, loadRuntimeConfig, type RuntimeConfig } from '../lib/config/runtime.js';
import { EmbeddedPostgresError, explainDatabaseFailure } from '../lib/db/postgres.js';
import { KeyCustodyError } from '../lib/keys/kek.js';
import type { Operations } from '../lib/ops/operations.js';
import { shutDownTracing, tracesProtocol, tracingEnabled } from '../lib/ops/tracing.js';

/**
 * Stops a running part cleanly on Ctrl-C, SIGTERM or SIGHUP (its terminal closed), once: its readiness
 * fails first, for SHUTDOWN_DELAY_MS (a load balancer's time to stop sending to it), then its ports
 * close to new connections while requests in flight finish; after SHUTDOWN_TIMEOUT_MS more it exits
 * whatever is left.
 */
export function stopOnSignal(stop: () => Promise<void>, operations: Operations, shutdown: RuntimeConfig['shutdown']): void {
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
export function configOrExit(): RuntimeConfig {
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

/** Ends a start that cannot open its signing keys with the one sentence that says why. */
export function endOnKeyCustodyError(error: unknown): never {
  if (!(error instanceof KeyCustodyError)) throw error;
  console.error(error.message);
  process.exit(1);
}

/**
 * Ends a start that its database (external or embedded), its signing keys or a setting (a port in use) stop with the one
 * sentence that says why (the database named without its password), instead of a driver's stack trace; other errors go on.
 */
export function endOnStartFailure(databaseUrl: string | undefined) {
  return (error: unknown): never => {
    const database = databaseUrl && explainDatabaseFailure(error, databaseUrl);
    if (database) {
      console.error(database);
      process.exit(1);
    }
    if (error instanceof ConfigurationError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(1);
    }
    if (error instanceof EmbeddedPostgresError) {
      console.error(error.message);
      process.exit(1);
    }
    return endOnKeyCustodyError(error);
  };
}
