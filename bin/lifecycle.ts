import { ConfigurationError, loadRuntimeConfig, type RuntimeConfig } from '../lib/config/runtime.js';
import { explainDatabaseFailure } from '../lib/db/postgres.js';
import { KeyCustodyError } from '../lib/keys/kek.js';
import { shutDownTracing, tracesProtocol, tracingEnabled } from '../lib/ops/tracing.js';

/** Stops a running part cleanly on Ctrl-C, SIGTERM or SIGHUP (its terminal closed), once, sending the spans still buffered. */
export function stopOnSignal(stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${signal}: stopping…`);
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
 * Ends a start that its database or its signing keys stop with the one sentence that says why (the
 * database named without its password), instead of a driver's stack trace; other errors go on.
 */
export function endOnStartFailure(databaseUrl: string | undefined) {
  return (error: unknown): never => {
    const database = databaseUrl && explainDatabaseFailure(error, databaseUrl);
    if (database) {
      console.error(database);
      process.exit(1);
    }
    return endOnKeyCustodyError(error);
  };
}
