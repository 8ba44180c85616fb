/** GraphiQL on the gateway, served from files installed with the project, so exploring the graph needs no network. */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

const requireModule = createRequire(import.meta.url);
const graphiqlDirectory = join(dirname(fileURLToPath(import.meta.url)), 'graphiql');
const packageFile = (name: string, file: string) => join(dirname(requireModule.resolve(`${name}/package.json`)), file);
/** The only files GraphiQL's page loads, each from an installed package. */
const GRAPHIQL_ASSETS: Record<string, { file: string; type: string }> = {
  'graphiql.min.css': { file: packageFile('graphiql', 'graphiql.min.css'), type: 'text/css; charset=utf-8' },
  'graphiql.min.js': { file: packageFile('graphiql', 'graphiql.min.js'), type: 'text/javascript; charset=utf-8' },
  'react.production.min.js': { file: packageFile('react', 'umd/react.production.min.js'), type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { file: packageFile('react-dom', 'umd/react-dom.production.min.js'), type: 'text/javascript; charset=utf-8' },
};

const sendFile = (reply: FastifyReply, file: string, type: string) =>
  reply.type(type).headers({ 'cache-control': 'public, max-age=3600', 'x-content-type-options': 'nosniff' }).send(createReadStream(file));

/** GraphiQL's page at /graphiql/ (/ and /graphiql redirect there), its script, and the packages' files it loads. */
export function serveGraphiql(app: FastifyInstance): void {
  for (const path of ['/', '/graphiql']) app.get(path, async (_request, reply) => reply.redirect('/graphiql/'));
  app.get('/graphiql/', async (_request, reply) => sendFile(reply, join(graphiqlDirectory, 'index.html'), 'text/html; charset=utf-8'));
  app.get('/graphiql/graphiql.js', async (_request, reply) => sendFile(reply, join(graphiqlDirectory, 'graphiql.js'), 'text/javascript; charset=utf-8'));
  for (const [name, asset] of Object.entries(GRAPHIQL_ASSETS)) app.get(`/graphiql/assets/${name}`, async (_request, reply) => sendFile(reply, asset.file, asset.type));
}
