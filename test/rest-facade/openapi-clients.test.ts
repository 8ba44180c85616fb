/**
 * The served OpenAPI documents as client tooling meets them: each one, fetched from a running
 * platform, passes `redocly lint` with the recommended rules (redocly.yaml); TypeScript types
 * generated from them by openapi-typescript type-check a small client program; and that client,
 * with openapi-fetch, runs a real flow against the platform.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceName } from '../../lib/config/services.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';
import { processEnv } from '../support/environment.js';

const run = promisify(execFile);
const SERVICES: ServiceName[] = ['trust', 'registry', 'issuer', 'archive'];
const ROOT = new URL('../../', import.meta.url).pathname;
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
/** Redocly sends no usage data and checks for no update. */
const QUIET = processEnv({ REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' });

let platform: SharedTestStack;
let folder: string;
const files = {} as Record<ServiceName, string>;

beforeAll(async () => {
  platform = await sharedTestStack();
  folder = mkdtempSync(join(tmpdir(), 'openapi-clients-'));
  for (const service of SERVICES) {
    const response = await fetch(`${new URL(platform.base(service)).origin}/docs/${service}/openapi.json`);
    expect(response.status).toBe(200);
    files[service] = join(folder, `${service}.json`);
    writeFileSync(files[service], await response.text());
  }
}, 120_000);
afterAll(async () => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

type LintReport = { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location: { source?: { ref: string }; pointer: string }[] }[] };
let reports: Promise<LintReport[]> | undefined;

/**
 * One `redocly lint` over the four documents (one process, not four): with `--format json` it writes
 * one report per document, in the order the documents are given, one JSON object after another.
 */
function lintReports(): Promise<LintReport[]> {
  reports ??= (async () => {
    const outcome = await run(bin('redocly'), ['lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', ...SERVICES.map((service) => files[service])], {
      env: QUIET,
      maxBuffer: 64 << 20,
    }).catch((error: { stdout: string; stderr: string }) => error);
    const parsed = jsonObjects(outcome.stdout) as LintReport[];
    expect(parsed, outcome.stderr).toHaveLength(SERVICES.length);
    return parsed;
  })();
  return reports;
}

/** The JSON objects written one after another in `text`. */
function jsonObjects(text: string): unknown[] {
  const objects: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' && depth++ === 0) start = index;
    else if (char === '}' && --depth === 0) objects.push(JSON.parse(text.slice(start, index + 1)));
  }
  return objects;
}

describe('redocly lint, recommended rules', () => {
  it.each(SERVICES)('passes the %s document without an error or a warning', async (service) => {
    const report = (await lintReports())[SERVICES.indexOf(service)]!;
    const problems = report.problems.map((problem) => `${problem.location[0]?.source?.ref} ${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});

describe('a client generated from the served documents (openapi-typescript, openapi-fetch)', () => {
  const client = join(ROOT, 'test', 'rest-facade', 'typed-client');

  it('type-checks: the generated types of every document, and a client program written against them', async () => {
    mkdirSync(join(client, 'generated'), { recursive: true });
    for (const service of SERVICES) {
      const types = astToString(await openapiTS(readFileSync(files[service], 'utf8')));
      expect(types).toContain('export interface paths');
      writeFileSync(join(client, 'generated', `${service}.ts`), types);
    }
    // The program also holds misuses marked @ts-expect-error: were the types loose, those marks would fail.
    const checked = await run(bin('tsc'), ['-p', join(client, 'tsconfig.json')], { cwd: ROOT }).catch((error: { stdout: string; code: number }) => error);
    expect(checked.stdout).toBe('');
  }, 120_000);

  it('runs a flow against the platform: model, passport, event, pack, read back, verdict, a refusal', async () => {
    const serial = Date.now().toString(36);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(client, 'flow.ts'), platform.base('registry'), platform.base('issuer'), TOKENS.writer, serial], {
      cwd: ROOT,
      env: processEnv(),
    });
    const seen = JSON.parse(stdout);
    expect(seen.created).toMatchObject({ status: 201, status_: 'draft' });
    expect(seen.created.location).toBe(`${platform.base('issuer')}/passports/${encodeURIComponent(seen.created.passportId)}`);
    expect(seen.appended).toEqual({ seq: 0, status: 'active' });
    expect(seen.minted).toEqual({ status: 201, location: seen.created.location });
    expect(seen.read).toEqual({ status: 'active', log: ['activated'], pack: 'string' });
    // A fresh platform places its own keys in the trust graph: the passport verifies with full coverage.
    expect(seen.verdict).toEqual({ outcome: 'verified', checks_run: seen.verdict.checks_total, checks_total: seen.verdict.checks_total });
    expect(seen.missing).toEqual({ status: 404, code: 'NOT_FOUND' });
  }, 120_000);
});
