/**
 * Every request example of README.md and docs/*.md, run as a reader runs it, in document order,
 * against one new platform (docs/REST.md, "Examples in the docs"): each `sh` block with curl in a
 * new bash, curl's own status of each transfer against the status its comment gives; each `json`
 * block after a `<!-- POST /path STATUS -->` comment sent as that request's body.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchFolder } from '../support/scratch-folder.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

const root = join(import.meta.dirname, '..', '..');
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(root, 'docs'), { withFileTypes: true })
    .flatMap((entry) => (entry.isFile() && entry.name.endsWith('.md') ? [`docs/${entry.name}`] : []))
    .sort(),
];

type Example = { where: string } & ({ kind: 'shell'; script: string; statuses: number[] } | { kind: 'body'; path: string; status: number; body: string });

const MARKER = /^<!-- POST (\/\S*) (\d{3}) -->$/;
/** A curl command: the word at the start of a command (a line, a pipe, a command substitution). */
const CURL = /(?:^|[\s;&|(])curl\s/g;
/** The status a curl command's comment starts with. */
const STATUS_COMMENT = /\s#\s+(\d{3})\b/;

/** The examples of one document, and what in it shows a request outside the convention. */
function examplesOf(document: string): { examples: Example[]; strays: string[] } {
  const tokens = new MarkdownIt({ html: true }).parse(readFileSync(join(root, document), 'utf8'), {});
  const examples: Example[] = [];
  const strays: string[] = [];
  tokens.forEach((token, index) => {
    const where = `${document}:${(token.map?.[0] ?? 0) + 1}`;
    const marker = token.type === 'html_block' ? MARKER.exec(token.content.trim()) : null;
    if (token.type === 'html_block' && /^<!-- [A-Z]+ \//.test(token.content.trim()) && !marker) strays.push(`${where}: a marker not of the form <!-- POST /path STATUS -->`);
    if (marker) {
      const fence = tokens[index + 1];
      if (fence?.type !== 'fence' || fence.info.trim() !== 'json') strays.push(`${where}: ${marker[0].trim()} is not followed by a json block`);
      else examples.push({ where, kind: 'body', path: marker[1]!, status: Number(marker[2]), body: fence.content });
      return;
    }
    if (token.type !== 'fence') return;
    const code = token.content
      .split('\n')
      .map((line) => line.replace(/\s#.*$/, ''))
      .join('\n');
    const curls = code.match(CURL)?.length ?? 0;
    if (/^(GET|POST) \//m.test(token.content)) strays.push(`${where}: a request line in a block: write it as a marked json block or a curl command`);
    if (curls === 0) return;
    if (token.info.trim() !== 'sh') {
      strays.push(`${where}: curl in a block not marked sh`);
      return;
    }
    const statuses = token.content.split('\n').flatMap((line) => {
      const status = STATUS_COMMENT.exec(line);
      return status ? [Number(status[1])] : [];
    });
    if (statuses.length !== curls) strays.push(`${where}: ${curls} curl commands, ${statuses.length} with the status they answer in their comment`);
    else examples.push({ where, kind: 'shell', script: token.content, statuses });
  });
  return { examples, strays };
}

const found = DOCUMENTS.map(examplesOf);
const examples = found.flatMap(({ examples }) => examples);

let platform: TestStack;
const folder = scratchFolder('doc-examples-');
beforeAll(async () => {
  platform = await startTestStack();
  // Each transfer's status on stderr, whatever the command does with its body (curl 7.63: %{stderr}).
  writeFileSync(join(folder, '.curlrc'), 'silent\nshow-error\nwrite-out = "%{stderr}@@status %{http_code}\\n"\n');
}, 60_000);
afterAll(() => platform?.stop());

/** Runs a block as a reader pastes it into bash, with the documented addresses standing for the test platform's. */
function runShell(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const facade = new URL(platform.base('trust')).origin;
  const gateway = new URL(platform.stack.gateway.graphqlUrl).origin;
  const text = script.replaceAll('http://127.0.0.1:3000', facade).replaceAll('http://127.0.0.1:4000', gateway);
  const env = newcomerEnv({ HOME: folder, CURL_HOME: folder, LC_ALL: 'C.UTF-8', B: facade, A: TOKENS.admin, ADMIN: TOKENS.admin, W: TOKENS.writer });
  return new Promise((resolve, reject) => {
    const shell = spawn('bash', ['-c', `set -euo pipefail\n${text}`], { cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    shell.on('error', reject);
    shell.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the request examples of the docs', () => {
  it('are all in the convention, and there are some in each document that shows requests', () => {
    expect(found.flatMap(({ strays }) => strays)).toEqual([]);
    expect([...new Set(examples.map(({ where }) => where.split(':')[0]))]).toEqual(['README.md', 'docs/OPERATIONS.md', 'docs/OPERATORS.md', 'docs/REST.md', 'docs/issuer.md', 'docs/trust.md']);
  });

  it('each answer the status they say, run as written in order', async () => {
    for (const example of examples) {
      if (example.kind === 'shell') {
        const run = await runShell(example.script);
        const statuses = [...run.stderr.matchAll(/^@@status (\d{3})$/gm)].map((match) => Number(match[1]));
        expect({ at: example.where, exit: run.code, statuses }, `${run.stderr}\n${run.stdout.slice(0, 2000)}`).toEqual({ at: example.where, exit: 0, statuses: example.statuses });
      } else {
        const response = await fetch(`${new URL(platform.base('trust')).origin}${example.path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${example.path.includes('/admin/') || example.path.startsWith('/trust/') ? TOKENS.admin : TOKENS.writer}`, 'content-type': 'application/json' },
          body: example.body,
        });
        expect({ at: example.where, status: response.status }, await response.text()).toEqual({ at: example.where, status: example.status });
      }
    }
  });
});
