/**
 * A typed client generated from the supergraph, as a client team would make one: GraphQL Code
 * Generator's client preset over the supergraph SDL the gateway writes, with the example queries
 * of the README and docs/ONE-GRAPH.md as its documents. The generated typed documents, and a
 * program that reads their answers through the generated types, pass the TypeScript compiler;
 * then each document runs through urql against the gateway and answers as promised.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import { Client, fetchExchange } from '@urql/core';
import type { DocumentNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, type SharedTestStack } from '../support/stack.js';
import { createModel, passportsAcrossServices, SHARED_TRUST, trustTheIssuerOnce } from './support.js';

const MODEL = 'battery-typed-client';
let platform: SharedTestStack;
let ids: string[];
let directory: string;

beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuerOnce(platform);
  ids = await passportsAcrossServices(platform, MODEL, 3);
  // Inside the project, so that the generated code finds the packages it imports.
  await mkdir('node_modules/.cache', { recursive: true });
  directory = await mkdtemp(join(process.cwd(), 'node_modules', '.cache', 'typed-client-'));
}, 300_000);
afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** The README's query (named, as a generated client wants) and every example of docs/ONE-GRAPH.md. */
async function exampleDocuments(): Promise<string[]> {
  const readme = await readFile('README.md', 'utf8');
  const passport = /## One graph[\s\S]*?```graphql\n([\s\S]*?)```/.exec(readme)![1]!.replace(/^\{/, 'query ReadmePassport($id: ID!) {').replace('"…"', '$id');
  const oneGraph = [...(await readFile('docs/ONE-GRAPH.md', 'utf8')).matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1]!);
  return [passport, ...oneGraph];
}

describe('a client generated from the supergraph', () => {
  it('type-checks, and runs the README’s and docs/ONE-GRAPH.md’s queries', async () => {
    const schema = join(directory, 'supergraph.graphql');
    await writeFile(schema, platform.stack.gateway.supergraphSdl);
    const documents = await exampleDocuments();
    await writeFile(join(directory, 'examples.graphql'), documents.join('\n'));
    await generate(
      {
        schema,
        documents: join(directory, 'examples.graphql'),
        generates: { [`${join(directory, 'gql')}/`]: { preset: 'client', config: { useTypeImports: true, enumsAsTypes: true } } },
        silent: true,
      },
      true,
    );

    // A program written against the generated types: what a client team compiles.
    await writeFile(
      join(directory, 'uses.ts'),
      `import { ReadmePassportDocument, KeyStandingDocument } from './gql/graphql.js';
import type { ResultOf, VariablesOf } from '@graphql-typed-document-node/core';
type Passport = NonNullable<ResultOf<typeof ReadmePassportDocument>['passport']>;
export const status = (passport: Passport): string => passport.status;
export const kids = (passport: Passport): string[] => passport.signingKeys.map((use) => use.kid);
export const variables: VariablesOf<typeof KeyStandingDocument> = { kid: 'k', at: '2026-01-01T00:00:00Z' };
// @ts-expect-error the generated type knows passport has no field "stauts"
export const typo = (passport: Passport) => passport.stauts;
export { ReadmePassportDocument };
`,
    );
    // Compiled as its own project: the @types packages this repository happens to hold are not a client's, so none are loaded.
    await writeFile(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { noEmit: true, strict: true, skipLibCheck: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: [] },
        files: ['uses.ts'],
      }),
    );
    await promisify(execFile)(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', directory], { timeout: 120_000 }).catch((error: { stdout?: string }) => {
      throw new Error(`the generated client does not type-check:\n${error.stdout}`);
    });

    const generated = (await import(pathToFileURL(join(directory, 'gql', 'graphql.ts')).href)) as Record<string, DocumentNode>;
    const client = new Client({ url: platform.stack.gateway.graphqlUrl, exchanges: [fetchExchange], preferGetMethod: false, requestPolicy: 'network-only' });
    const run = async (name: string, variables: Record<string, unknown>) => {
      const document = generated[`${name}Document`];
      expect(document, name).toBeDefined();
      const result = await client.query(document!, variables).toPromise();
      expect(result.error, name).toBeUndefined();
      return result.data;
    };

    const readme = await run('ReadmePassport', { id: ids[0] });
    expect(readme.passport).toMatchObject({ status: 'draft', typeRecord: { id: MODEL, version: 1, kind: 'model' }, snapshots: [{ sha512: expect.stringMatching(/^[0-9a-f]{128}$/) }] });
    const eventKey = readme.passport.signingKeys.find((use: { role: string }) => use.role === 'event');
    expect(eventKey.standingAtFirstUse).toMatchObject({ standing: 'valid', rootId: SHARED_TRUST.root });

    const across = await run('PassportsAcrossServices', { ids });
    expect(across.passports.map((passport: { id: string }) => passport.id)).toEqual(ids);
    const verifier = await run('PassportForAVerifier', { id: ids[0] });
    expect(verifier.passport.typeRecord).toMatchObject({ id: MODEL, currentVersion: 1 });
    const snapshot = await run('SnapshotAndItsPassport', { snapshotId: readme.passport.snapshots[0].id });
    expect(snapshot.snapshot.passport.id).toBe(ids[0]);
    const standing = await run('KeyStanding', { kid: eventKey.kid, at: eventKey.firstUsed });
    expect(standing.trustKeyStandings).toEqual([expect.objectContaining({ kid: eventKey.kid, standing: 'valid' })]);
  }, 180_000);
});
