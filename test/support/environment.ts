/**
 * The suite is hermetic: the platform's own settings in the caller's shell (README, "Configuration":
 * PASSPORT_* tokens and folders, DATABASE_URL, ports, LOG_LEVEL, OTEL_* …; libpq's PG*; Apollo's
 * APOLLO_*) reach neither the platform the tests run in process nor any process they start. The
 * test processes drop them as vitest loads its configuration (vitest.config.ts), before the global
 * setup and the workers, which inherit what is left; a process a test starts gets its environment
 * from `processEnv`, which drops them again (a test may set one in its own process for a while).
 * `npm test` runs its layers with such settings set (bin/test-layers.mjs), so a leak fails the run.
 */

const PLATFORM_SETTING = new RegExp(
  [
    '^PASSPORT_',
    '^OTEL_',
    '^APOLLO_',
    // libpq's defaults, which pg reads for whatever a URL leaves out.
    '^PG[A-Z]+$',
    // Per service: <SERVICE>_DATABASE_URL, _REST_PORT, _REST_PREFIX, _PUBLIC_URL, _SUBGRAPH_PORT, _SUBGRAPH_URL; ISSUER_ID, ISSUER_QR_BUDGET, TRUST_MASTER_LIST_ORIGIN.
    '^(TRUST|REGISTRY|ISSUER|ARCHIVE)_',
    // The identity store's IDENTITY_DATABASE_URL.
    '^IDENTITY_',
    '^GRAPHQL_',
    '^METRICS',
    '^SHUTDOWN_',
    '^LOG_(LEVEL|FORMAT)$',
    '^DATABASE_',
    '^(EMBEDDED_PG_PORT|HOST|FACADE_PORT|GATEWAY_PORT|GATEWAY_URL|SUBGRAPH_SECRET|SUBGRAPH_REPLICAS|BODY_LIMIT_BYTES|REQUEST_TIMEOUT_MS)$',
  ].join('|'),
);

/** Whether a variable is one the platform reads as its configuration. */
export function isPlatformSetting(name: string): boolean {
  return PLATFORM_SETTING.test(name);
}

/** Removes the platform's settings from `env` (the test process's own by default), in place. */
export function dropPlatformSettings(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of Object.keys(env)) if (isPlatformSetting(name)) delete env[name];
}

/**
 * The environment of a process a test starts: the test process's own (PATH, HOME, the run's temp
 * folder …) without any of the platform's settings, and `settings` over it.
 */
export function processEnv(settings: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  dropPlatformSettings(env);
  return { ...env, ...settings };
}

/** A newcomer's shell, as the docs' commands meet it: PATH alone, and `settings`. */
export function newcomerEnv(settings: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, ...settings };
}
