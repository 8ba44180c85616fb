/** `npm start`: the whole platform on this machine, until Ctrl-C. */
import { join } from 'node:path';
import { createTokensOnFirstStart, loadAccessTokens, tokensFile } from '../lib/auth/tokens.js';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { SERVICES } from '../lib/config/services.js';
import { loadOrCreateKek } from '../lib/keys/kek.js';
import { endOnKeyCustodyError, stopOnSignal } from './lifecycle.js';
import { startStack } from './stack.js';

const config = loadRuntimeConfig();
const created = await createTokensOnFirstStart();
const kek = await loadOrCreateKek().catch(endOnKeyCustodyError);
if (kek.created) console.log(`Created the key-encryption key that seals the signing keys: ${kek.keys.file} (mode 0600). Keep it apart from the database and its backups.`);
const stack = await startStack({
  config,
  tokens: loadAccessTokens(),
  kek: kek.keys,
  supergraphFile: join(config.dataDir, 'supergraph.graphql'),
  log: (line) => {
    if (process.env.LOG_LEVEL === 'debug' || !line.startsWith('postgres:')) console.log(line);
  },
}).catch(endOnKeyCustodyError);

const lines = [
  '',
  'Passport services are running.',
  `  GraphQL (gateway)  ${stack.gateway.graphqlUrl}`,
  `  GraphiQL           ${stack.gateway.graphiqlUrl}`,
  ...SERVICES.map((service) => `  ${`${service} REST`.padEnd(18)} ${stack.facade.baseUrls[service]}   (OpenAPI: ${new URL(stack.facade.baseUrls[service]).origin}/docs/${service}/openapi.json)`),
  `  Supergraph SDL     ${join(config.dataDir, 'supergraph.graphql')}`,
  `  Database           ${config.databaseUrl ? 'external (DATABASE_URL)' : `embedded PostgreSQL in ${join(config.dataDir, 'postgres')}`}`,
];
if (created) {
  lines.push(
    '',
    'Access tokens were created for this installation. They are shown this once; only their hashes are kept',
    `(in ${tokensFile()}):`,
    `  admin   ${created.admin}`,
    `  writer  ${created.writer}`,
  );
}
console.log([...lines, '', 'Press Ctrl-C to stop.'].join('\n'));

stopOnSignal(stack.stop);
