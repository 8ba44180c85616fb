import { defineConfig } from 'vitest/config';

/**
 * Two layers. `unit`: tests of plain modules (domains, crypto, route matching, the verifier on files)
 * that need no PostgreSQL and give feedback in seconds. `integration`: everything else, against one
 * embedded PostgreSQL for the run (test/support/global-setup.ts) and real HTTP. `npm test` runs
 * the static checks, then unit with integration beside it (bin/test-layers.mjs), timing each.
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
  'test/lib/metrics-off.test.ts',
  'test/lib/tracing-off.test.ts',
  'test/gateway/composition.test.ts',
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
    // A worker runs its files one after another in one module graph, so the platform's code
    // (type-graphql, Apollo, four Prisma clients) is loaded once per worker, not once per file. Files
    // stay isolated by data: each starts its stacks on a database of its own and stops them, and puts
    // back any process.env it changes. (Vitest reads this for the pool as a whole, not per project.)
    isolate: false,
    testTimeout: 30_000,
    // The stacks the tests start log every request (lib/ops/logging.ts); warnings and errors are what a failing run needs.
    env: { LOG_LEVEL: 'warn' },
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: UNIT, globalSetup: ['test/support/global-setup.ts'], setupFiles: ['test/support/leftover-stacks.ts'] },
      },
    ],
  },
});
