/**
 * A bin/ command run as an operator runs it (`npm run <name>` is `node bin/run.mjs bin/<name>.ts`),
 * as its own process, with none of the platform's settings of the test process (test/support/environment.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { processEnv } from './environment.js';

const run = promisify(execFile);

export interface CommandOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `script` (e.g. `bin/backup.ts`) with `env` over a clean environment; resolves with its exit code and output, whatever the code. */
export async function binCommand(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<CommandOutcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/run.mjs', script, ...args], { env: processEnv(env), timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as CommandOutcome;
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
