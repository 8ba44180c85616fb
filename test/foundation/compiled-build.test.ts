/**
 * The commands' compiled build (bin/run.mjs) keeps the names that are read, and no others: a class's
 * name (a GraphQL type name under type-graphql, an error's `type` in a log line) is its source name,
 * while a function made at every request is not given its name by a call of its own (esbuild's
 * keepNames wraps each one in a defineProperty of `name`; the cost limit alone made about 15 per operation).
 * Run in a child process over the build itself, as the commands load it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error bin/run.mjs is plain JavaScript, without declarations.
import { upToDateBuild } from '../../bin/run.mjs';

/** The build's chunk that holds a source file (by the chunks' source maps). */
function chunkOf(build: string, source: string): string {
  const chunk = readdirSync(build).find(
    (name) => name.endsWith('.mjs') && (JSON.parse(readFileSync(join(build, `${name}.map`), 'utf8')) as { sources: string[] }).sources.some((path) => path.endsWith(source)),
  );
  if (!chunk) throw new Error(`no chunk of the build holds ${source}`);
  return pathToFileURL(join(build, chunk)).href;
}

describe('the compiled build', () => {
  it('costs an operation without defining a function name, and keeps the names of classes', async () => {
    const build = (await upToDateBuild()) as string;
    const script = `
      const define = Object.defineProperty;
      let named = 0;
      Object.defineProperty = (target, key, descriptor) => {
        if (key === 'name' && typeof target === 'function') named += 1;
        return define(target, key, descriptor);
      };
      const { buildSchema, parse } = await import('graphql');
      const { costLimitPlugin, costAnnotations } = await import(${JSON.stringify(chunkOf(build, 'lib/graphql/cost.ts'))});
      const { DeadlineExceeded } = await import(${JSON.stringify(chunkOf(build, 'lib/http/post-json.ts'))});
      const { PageInfo } = await import(${JSON.stringify(chunkOf(build, 'lib/graphql/common-types.ts'))});
      const sdl = 'type Passport { id: ID! events: [String!]! } type Query { passport(id: ID!): Passport passports(ids: [ID!]!): [Passport]! }';
      const schema = buildSchema(sdl);
      const annotations = costAnnotations(parse(sdl));
      const document = parse('query($ids: [ID!]!) { passports(ids: $ids) { id events } passport(id: "p") { id } }');
      // The gateway's cost limit over two requests of one document: estimated, run, counted as answered.
      const plugin = costLimitPlugin(annotations, 10_000, () => {});
      const operation = document.definitions[0];
      named = 0;
      for (const ids of [['a'], ['a', 'b']]) {
        const listener = await plugin.requestDidStart();
        await listener.didResolveOperation({ schema, document, operation, request: { variables: { ids } } });
        await listener.executionDidStart();
        const singleResult = { data: { passports: ids.map((id) => ({ id, events: [] })), passport: null } };
        await listener.willSendResponse({ operation, response: { body: { kind: 'single', singleResult } } });
        if (singleResult.extensions.cost.actual !== ids.length + 1) throw new Error(JSON.stringify(singleResult.extensions));
      }
      console.log(JSON.stringify({ named, classes: [DeadlineExceeded.name, PageInfo.name] }));
    `;
    const found = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
    expect(found).toEqual({ named: 0, classes: ['DeadlineExceeded', 'PageInfo'] });
  });
});
