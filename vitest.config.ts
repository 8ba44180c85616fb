import { defineConfig } from 'vitest/config';

/**
 * Two layers. `unit`: tests of plain modules (domains, crypto, route matching, the verifier on files)
 * that need no PostgreSQL and give feedback in seconds. `integration`: everything else, against one
 * embedded PostgreSQL for the run (test/support/global-setup.ts) and real HTTP. `npm test` runs
 * the type check, then unit, then integration (bin/test-layers.mjs), timing each.
 * A new test belongs in UNIT only if it needs neither a database nor a running stack.
 */
export const UNIT = [
  'test/*/domain/**/*.test.ts',
  'test/foundation/prisma-clients.test.ts',
  'test/foundation/system-packages.test.ts',
  'test/lib/admin-log.test.ts',
  'test/lib/crypto.test.ts',
  'test/lib/database-unavailable.test.ts',
  'test/lib/process-hooks.test.ts',
  'test/lib/runtime-config.test.ts',
  'test/lib/tracing-off.test.ts',
  'test/gateway/subgraph-fetch.test.ts',
  'test/rest-facade/http-edges.test.ts',
  'test/rest-facade/documented-codes.test.ts',
  'test/verifier/bagit.test.ts',
];

export default defineConfig({
  test: {
    // Integration files each start a whole stack; two at a time suits a 2-core machine.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    // The stacks the tests start log every request (lib/ops/logging.ts); warnings and errors are what a failing run needs.
    env: { LOG_LEVEL: 'warn' },
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT, globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});
