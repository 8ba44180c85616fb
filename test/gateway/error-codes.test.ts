/**
 * Every error code a client can meet is on docs/GRAPHQL-ERRORS.md. The codes are read from the
 * source — each problem raised with a literal code, the domains' code-to-status tables, the
 * gateway's and the tokens' codes — so a new code without a row there fails this test, and so
 * does one whose problem `type` would link to no row of /docs/problems.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REGISTRY_ERROR_STATUS } from '../../subgraphs/registry/domain/errors.js';
import { TRUST_ERROR_STATUS } from '../../lib/formats/trust/errors.js';
import { problemPage } from '../../rest-facade/problem-page.js';

async function sources(directory: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && entry.name.endsWith('.ts') && !path.includes('/generated/')) files.push(path);
  }
  return files;
}

/** The `| 'CODE'` members of a union type or the `CODE: …` members of an object literal, after `start`. */
function membersAfter(text: string, start: string): string[] {
  const from = text.indexOf(start);
  expect(from, start).toBeGreaterThanOrEqual(0);
  const block = text.slice(from, text.indexOf(';', from));
  return [...block.matchAll(/(?:\| '|^\s+)([A-Z][A-Z0-9_]+)(?:'|:)/gm)].map((match) => match[1]!);
}

describe('docs/GRAPHQL-ERRORS.md', () => {
  it('has a row for every error code the gateway, the tokens and the services raise', async () => {
    const codes = new Set<string>([...Object.keys(TRUST_ERROR_STATUS), ...Object.keys(REGISTRY_ERROR_STATUS), 'NOT_FOUND']);
    for (const directory of ['lib', 'gateway', 'subgraphs', 'rest-facade']) {
      for (const file of await sources(directory)) {
        const text = await readFile(file, 'utf8');
        for (const match of text.matchAll(/(?:badRequest|conflict|unprocessable|ProblemError|IdentityRefusal|problem)\(\s*(?:\d{3},\s*)?'([A-Z][A-Z0-9_]+)'/g)) codes.add(match[1]!);
        if (file.startsWith('gateway/') || file === 'lib/auth/tokens.ts') for (const match of text.matchAll(/code: '([A-Z][A-Z0-9_]+)'/g)) codes.add(match[1]!);
      }
    }
    const issuerProblems = await readFile('subgraphs/issuer/service/problems.ts', 'utf8');
    for (const code of membersAfter(issuerProblems, 'const STATUS_OF')) codes.add(code);
    const issuerErrors = await readFile('lib/formats/issuer/errors.ts', 'utf8');
    // Reasons of INVALID_IDENTITY (its `reason` member), documented in its row, not problem codes.
    const identityReasons = membersAfter(issuerErrors, 'export type IdentityFailure');
    for (const code of identityReasons) codes.add(code);
    const graphqlErrors = await readFile('lib/graphql/errors.ts', 'utf8');
    for (const match of /REQUEST_ERROR_CODES = new Set\(\[([^\]]*)\]/.exec(graphqlErrors)![1]!.matchAll(/'([A-Z_]+)'/g)) codes.add(match[1]!);
    codes.add('INTERNAL_SERVER_ERROR');

    const documented = await readFile('docs/GRAPHQL-ERRORS.md', 'utf8');
    const missing = [...codes].filter((code) => !documented.includes(`\`${code}\``));
    expect(codes.size).toBeGreaterThan(80);
    expect(missing).toEqual([]);
    // A problem's type links to its code's row on the page the facade serves from that file.
    const page = problemPage();
    const unlinked = [...codes].filter((code) => !identityReasons.includes(code) && !page.includes(`<tr id="${code.toLowerCase().replaceAll('_', '-')}">`));
    expect(unlinked).toEqual([]);
  });
});
