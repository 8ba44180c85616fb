/**
 * Follows a notarization recipe the way a new user would: every step's files written and every
 * command run with `sh -c` in an empty directory, placeholders filled in, stopping at the first
 * command that fails.
 *
 * The commands run under one `sh` the test starts, each in a `sh -c` of its own as at a prompt:
 * forking the test worker (hundreds of megabytes) for each of the recipe's commands cost more CPU
 * than the commands themselves. That `sh` writes each step's files just before the step's commands
 * (copies of files prepared outside the working directory), so the working directory holds what a
 * user following the steps in turn would have.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { NotarizationRecipe } from '../../../subgraphs/archive/domain/index.js';

const run = promisify(execFile);

export interface RecipeOutcome {
  /** The number of the step whose command failed; absent when every step passed. */
  failedStep?: number;
  output: string;
}

/** The exit status of the script when it failed outside a step's commands (a file not placed). */
const NOT_FOLLOWED = 255;

export async function followRecipe(recipe: NotarizationRecipe, values: { id: string; notaryKid: string }): Promise<RecipeOutcome> {
  const directory = mkdtempSync(join(tmpdir(), 'archive-verifier-'));
  const staging = mkdtempSync(join(tmpdir(), 'archive-recipe-files-'));
  // The recipe's prerequisite "npm install jose@6", satisfied from this project's dependencies.
  symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(directory, 'node_modules'));
  const fill = (text: string) => text.replaceAll('{id}', values.id).replaceAll('{notary_kid}', values.notaryKid);
  // The script names its arguments by position ("${n}"), so no command or file name needs quoting.
  const args: string[] = [];
  const arg = (value: string) => `"\${${args.push(value)}}"`;
  const script = ['exec 2>&1'];
  for (const step of recipe.steps) {
    if (step.step < 1 || step.step >= NOT_FOLLOWED) throw new Error(`step number ${step.step} cannot be an exit status`);
    for (const file of step.files ?? []) {
      const prepared = join(staging, String(step.step), file.name);
      mkdirSync(join(staging, String(step.step)), { recursive: true });
      writeFileSync(prepared, fill(file.content));
      script.push(`cp ${arg(prepared)} ${arg(file.name)} || exit ${NOT_FOLLOWED}`);
    }
    for (const command of step.run) script.push(`sh -c ${arg(fill(command))} || exit ${step.step}`);
  }
  try {
    const { stdout } = await run('sh', ['-c', script.join('\n'), 'sh', ...args], { cwd: directory, env: { PATH: process.env.PATH, LC_ALL: 'C' }, maxBuffer: 64 * 1024 * 1024 });
    return { output: stdout };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string };
    if (typeof failed.code !== 'number' || failed.code === NOT_FOLLOWED) throw error;
    return { failedStep: failed.code, output: failed.stdout ?? '' };
  } finally {
    rmSync(directory, { recursive: true, force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}
