import { relative } from 'node:path';
import { defineConfig, type Plugin } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { dropPlatformSettings } from './test/support/environment.js';

// Hermetic: none of the platform's settings in the caller's shell reaches the global setup, the
// workers or what they start (test/support/environment.ts).
dropPlatformSettings();

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
  'test/foundation/hermetic-suite.test.ts',
  'test/foundation/compiled-build.test.ts',
  'test/foundation/worker-pool.test.ts',
  'test/lib/admin-log.test.ts',
  'test/lib/refusal-log.test.ts',
  'test/lib/crypto.test.ts',
  'test/lib/primitives.test.ts',
  'test/lib/graphql-cost.test.ts',
  'test/lib/database-unavailable.test.ts',
  'test/lib/process-hooks.test.ts',
  'test/lib/replace-file.test.ts',
  'test/lib/runtime-config.test.ts',
  'test/lib/oidc.test.ts',
  'test/lib/rate-limit-clients.test.ts',
  'test/lib/metrics-off.test.ts',
  'test/ops/histograms.test.ts',
  'test/ops/metrics-listener.test.ts',
  'test/lib/tracing-off.test.ts',
  'test/lib/change-payload.test.ts',
  'test/lib/feed-watchers.test.ts',
  'test/lib/shutdown.test.ts',
  'test/gateway/live-read-failures.test.ts',
  'test/gateway/composition.test.ts',
  'test/gateway/subgraph-fetch.test.ts',
  'test/rest-facade/http-edges.test.ts',
  'test/rest-facade/documented-codes.test.ts',
  'test/verifier/bagit.test.ts',
];

/**
 * The files that take longest, longest first (docs/PLUMBING.md, "npm test"): the unit layer's, then the
 * integration layer's. Vitest hands files to its two workers in order, longest first by the durations
 * of the last run it remembers (node_modules/.vite); on a fresh clone it remembers none and orders by
 * file size, which can leave a file of a minute and a half to start last, with the other worker idle
 * meanwhile (in the unit layer, prisma-clients' five `prisma generate`s, a file of 30 lines, came 52nd
 * of 59).
 */
export const LONGEST_FIRST = [
  'test/foundation/prisma-clients.test.ts',
  'test/archive/domain/oais.test.ts',
  'test/lib/oidc.test.ts',
  'test/rest-facade/http-edges.test.ts',
  'test/rest-facade/openapi-responses.test.ts',
  'test/lib/backup-restore.test.ts',
  'test/gateway/one-graph.test.ts',
  'test/first-contact/processes.test.ts',
  'test/first-contact/split-processes.test.ts',
  'test/ops/metrics.test.ts',
  'test/gateway/heap-bound.test.ts',
  'test/first-contact/start.test.ts',
  'test/foundation/previous-release-upgrade.test.ts',
  'test/verifier/verify-page-light.test.ts',
  'test/gateway/request-cost.test.ts',
  'test/trust/master-list.test.ts',
  'test/lib/restore-into-new-cluster.test.ts',
  'test/auth/authorization-matrix.test.ts',
  'test/trust/graph-pages.test.ts',
  'test/ops/traces-and-logs.test.ts',
  'test/foundation/sealed-keys.test.ts',
  'test/lib/embedded-postgres.test.ts',
  'test/trust/revocation-pages.test.ts',
  'test/gateway/subgraph-failures.test.ts',
  'test/gateway/aliases-batch.test.ts',
  'test/verifier/verify-page.test.ts',
  'test/verifier/passport-material.test.ts',
  'test/first-contact/oversized-bodies.test.ts',
  'test/ops/probes.test.ts',
  'test/archive/archive-api.test.ts',
  'test/verifier/trust-path.test.ts',
  'test/rest-facade/authentication-first.test.ts',
  'test/foundation/migrations.test.ts',
  'test/foundation/pkcs11-keys.test.ts',
  'test/issuer/packs-admin.test.ts',
  'test/gateway/live-limits.test.ts',
  'test/gateway/typed-client.test.ts',
  'test/gateway/supergraph-updates.test.ts',
  'test/ops/public-sampling.test.ts',
  'test/foundation/secret-hygiene.test.ts',
  'test/first-contact/subgraph-doors.test.ts',
  'test/verifier/one-verifier.test.ts',
  'test/rest-facade/openapi-clients.test.ts',
  'test/first-contact/busy-pool.test.ts',
  'test/ops/every-server.test.ts',
  'test/registry/models.test.ts',
  'test/issuer/hot-plans.test.ts',
  'test/registry/records.test.ts',
  'test/issuer/untp-credential.test.ts',
  'test/trust/concurrent-graph-writes.test.ts',
  'test/issuer/as-of.test.ts',
  'test/issuer/passports.test.ts',
  'test/archive/issuer-end-to-end.test.ts',
  'test/trust/trust-lists.test.ts',
  'test/trust/revocations.test.ts',
  'test/ops/rate-limits.test.ts',
  'test/ops/logs-untraced.test.ts',
  'test/first-contact/database-outage.test.ts',
  'test/issuer/operators.test.ts',
  'test/gateway/hive-gateway.test.ts',
  'test/auth/api-tokens.test.ts',
];

/** Vitest's order when it remembers every file's duration; otherwise LONGEST_FIRST's files first. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (file: TestSpecification) => relative(this.ctx.config.root, file.moduleId).replaceAll('\\', '/');
    if (sorted.every((file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${path(file)}`)?.duration !== undefined)) return sorted;
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.indexOf(path(file));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // A stable sort: the files outside the list keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

/**
 * No worker is stopped for want of work before the run ends: minWorkers is set to maxWorkers, whatever
 * `--maxWorkers` says. Vitest 3.2's pool (tinypool 1.1.1) stops a worker that finds the queue empty while
 * more than minWorkers run; the answer to the stop's teardown marks that worker available again, which
 * arms its idle timer a second time, and if the pool still holds more than minWorkers (maxWorkers at
 * least minWorkers + 2: 3 and 1) the timer stops it again while the first stop kills it. The second
 * stop's "Terminating worker thread" is rejected with nobody waiting, and vitest exits 1 at once: before
 * the files still running report, and before its global teardown (the run's PostgreSQL left running).
 * test/foundation/worker-pool.test.ts.
 */
const workersStayToTheEnd: Plugin = {
  name: 'passport:workers-stay-to-the-end',
  configureVitest({ vitest }) {
    vitest.config.minWorkers = vitest.config.maxWorkers;
  },
};

export default defineConfig({
  plugins: [workersStayToTheEnd],
  test: {
    // Two at a time suits a 2-core machine; `npm test` gives the integration layer one a core and one
    // more (bin/test-layers.mjs), its files waiting as well as computing.
    maxWorkers: 2,
    // A worker runs its files one after another in one module graph, so the platform's code
    // (type-graphql, Apollo, four Prisma clients) is loaded once per worker, not once per file. Files
    // stay isolated by data: each starts its stacks on a database of its own and stops them, or, when
    // it only touches data of its own, uses the worker's one shared stack (sharedTestStack in
    // test/support/stack.ts); and puts back any process.env it changes. (Vitest reads this for the
    // pool as a whole, not per project.)
    isolate: false,
    testTimeout: 30_000,
    // Each run has a temp folder of its own (TMPDIR), which must be empty at its end: test/support/run-temp-folder.ts.
    // The stacks the tests start log every request (lib/ops/logging.ts); warnings and errors are what a failing run needs.
    env: { LOG_LEVEL: 'warn' },
    hookTimeout: 120_000,
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, globalSetup: ['test/support/run-temp-folder.ts'] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: UNIT,
          globalSetup: ['test/support/run-temp-folder.ts', 'test/support/global-setup.ts'],
          setupFiles: ['test/support/leftover-stacks.ts'],
        },
      },
    ],
  },
});
