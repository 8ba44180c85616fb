/** Shared steps of the verifier tests: a scratch directory for material (removed when the file ends), and the CLI, in this process or as a child process. */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToEnd } from '../../verifier/cli.js';
import { scratchFolder } from '../support/scratch-folder.js';
import { processEnv } from '../support/environment.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function scratch(prefix: string) {
  const directory = scratchFolder(`verifier-${prefix}-`);
  const path = (name: string) => join(directory, name);
  return {
    directory,
    path,
    json(name: string, value: unknown): string {
      writeFileSync(path(name), JSON.stringify(value));
      return path(name);
    },
    bytes(name: string, value: Uint8Array | string): string {
      writeFileSync(path(name), value);
      return path(name);
    },
  };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The --json report, when --json was given and the output parses. */
  report?: any;
}

const withReport = (args: readonly string[], { code, stdout, stderr }: { code: number; stdout: string; stderr: string }): CliRun => {
  let report: unknown;
  if (args.includes('--json')) {
    try {
      report = JSON.parse(stdout);
    } catch {
      report = undefined;
    }
  }
  return { code, stdout, stderr, report };
};

/**
 * The CLI's command line run in this process: the same arguments, output and exit status as the
 * command (verifier/cli.ts main prints what runToEnd returns) without a Node start and tsx per run.
 */
export async function cli(...args: string[]): Promise<CliRun> {
  return withReport(args, await runToEnd(args));
}

/** Runs `node --import tsx verifier/cli.ts …` from the repository root, as a user would: for the runs whose subject is the command itself. */
export function cliProcess(...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/run.mjs', 'verifier/cli.ts', ...args], { cwd: ROOT, env: processEnv(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve(withReport(args, { code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }));
    });
  });
}

/** The codes of the failed findings of a report. */
export const failedCodes = (report: { findings: readonly { status: string; code?: string }[] }) => report.findings.filter((finding) => finding.status === 'failed').map((finding) => finding.code);
