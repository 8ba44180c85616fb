/** `npm start`: the whole platform on this machine, until Ctrl-C. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createTokensOnFirstStart, loadAccessTokens, tokenLines, tokensFile, writeNewTokensFile } from '../lib/auth/tokens.js';
import { loadOidcConfig } from '../lib/config/oidc.js';
import { embeddedPostgresUnreachable } from '../lib/db/embedded-postgres.js';
import { EmbeddedPostgresError } from '../lib/db/postgres.js';
import { SERVICES } from '../lib/config/services.js';
import { loadOrCreateKek } from '../lib/keys/kek.js';
import { serversShareThisProcess } from '../lib/ops/tracing.js';
import { runPart } from './lifecycle.js';
import { startStack } from './stack.js';

await runPart({
  databaseUrl: (config) => config.databaseUrl,
  async start(config) {
    // Six servers in this process: each keeps its own service name in traces and logs.
    serversShareThisProcess();
    // A setting that cannot be used stops the start before anything is made.
    const oidc = loadOidcConfig();
    const unreachable = config.databaseUrl ? undefined : await embeddedPostgresUnreachable(config.dataDir);
    if (unreachable) throw new EmbeddedPostgresError(unreachable);
    // Every mode writes here (supergraph SDL, token hashes, the embedded cluster), so it exists first.
    mkdirSync(config.dataDir, { recursive: true });
    const created = await createTokensOnFirstStart();
    if (created) {
      // Shown the moment their hashes are stored, so a start that fails later loses no token. On a terminal
      // only: stdout is also where the JSON logs go, and a log shipper must not collect them.
      if (process.stdout.isTTY) {
        console.log(
          [
            'Access tokens were created for this installation. They are shown this once; only their hashes are kept',
            `(in ${tokensFile()}; \`npm run tokens -- rotate\` issues new ones):`,
            ...tokenLines(created).map((line) => `  ${line}`),
          ].join('\n'),
        );
      } else {
        const file = await writeNewTokensFile(created);
        console.log(
          `Access tokens were created for this installation; only their hashes are kept (in ${tokensFile()}). This output is no terminal, so they are not printed: they are in ${file} (mode 0600). Keep them, then delete that file (\`npm run tokens -- rotate\` issues new ones).`,
        );
      }
    }
    const kek = await loadOrCreateKek();
    if (kek.created) console.log(`Created the key-encryption key that seals the signing keys: ${kek.keys.file} (mode 0600). Keep it apart from the database and its backups.`);
    return startStack({
      config,
      tokens: loadAccessTokens(),
      ...(oidc && { oidc }),
      kek: kek.keys,
      supergraphFile: join(config.dataDir, 'supergraph.graphql'),
      log: (line) => {
        if (process.env.LOG_LEVEL === 'debug' || !line.startsWith('postgres:')) console.log(line);
      },
    });
  },
  lines: (stack, config) => [
    '',
    'Passport services are running.',
    `  GraphQL (gateway)  ${stack.gateway.graphqlUrl}`,
    `  GraphiQL           ${stack.gateway.graphiqlUrl}`,
    ...SERVICES.map((service) => `  ${`${service} REST`.padEnd(18)} ${stack.facade.baseUrls[service]}   (OpenAPI: ${new URL(stack.facade.baseUrls[service]).origin}/docs/${service}/openapi.json)`),
    `  Supergraph SDL     ${join(config.dataDir, 'supergraph.graphql')}`,
    `  Database           ${stack.clusterDir ? `embedded PostgreSQL in ${stack.clusterDir}` : 'external (DATABASE_URL)'}`,
    `  Metrics            ${stack.metrics.url}   (all six servers; probes: /livez and /readyz on every port)`,
    '',
    'Press Ctrl-C to stop.',
  ],
});
