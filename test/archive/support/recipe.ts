/**
 * Follows a notarization recipe the way a new user would: every step's files written and every
 * command run with `sh -c` in an empty directory, placeholders filled in, stopping at the first
 * command that fails.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { NotarizationRecipe } from '../../../subgraphs/archive/domain/index.js';
import { newcomerEnv } from '../../support/environment.js';

const run = promisify(execFile);

export interface RecipeOutcome {
  /** The number of the step whose command failed; absent when every step passed. */
  failedStep?: number;
  output: string;
}

export async function followRecipe(recipe: NotarizationRecipe, values: { id: string; notaryKid: string }): Promise<RecipeOutcome> {
  const directory = mkdtempSync(join(tmpdir(), 'archive-verifier-'));
  // The recipe's prerequisite "npm install jose@6", satisfied from this project's dependencies.
  symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(directory, 'node_modules'));
  const fill = (text: string) => text.replaceAll('{id}', values.id).replaceAll('{notary_kid}', values.notaryKid);
  let output = '';
  try {
    for (const step of recipe.steps) {
      for (const file of step.files ?? []) writeFileSync(join(directory, file.name), fill(file.content));
      for (const command of step.run) {
        try {
          const { stdout, stderr } = await run('sh', ['-c', fill(command)], { cwd: directory, env: newcomerEnv({ LC_ALL: 'C' }), maxBuffer: 64 * 1024 * 1024 });
          output += stdout + stderr;
        } catch (error) {
          const failed = error as { stdout?: string; stderr?: string };
          return { failedStep: step.step, output: output + (failed.stdout ?? '') + (failed.stderr ?? '') };
        }
      }
    }
    return { output };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
