/**
 * The first layer of `npm test`: what the tests need from the operating system, as Debian packages.
 * Missing ones are installed when it can (root with apt-get), otherwise it stops with one sentence
 * naming the command to run. Then pkcs11js (an optional dependency with a native part, which npm ci
 * leaves out where no compiler was installed) is built if it does not load.
 * A new prerequisite is one line of SYSTEM_PACKAGES.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SystemPackage {
  /** The Debian package. */
  name: string;
  /** Commands it provides that the tests run, looked up in PATH. */
  commands?: string[];
  /** Files it provides at fixed places (where the tests name them). */
  files?: string[];
}

export const SYSTEM_PACKAGES: readonly SystemPackage[] = [
  { name: 'chromium', files: ['/usr/bin/chromium'] }, // playwright-core drives it in the GraphiQL and /verify/ page tests
  { name: 'fonts-dejavu-core', files: ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'] }, // Chromium's text
  { name: 'softhsm2', commands: ['softhsm2-util'], files: ['/usr/lib/softhsm/libsofthsm2.so'] }, // the PKCS#11 token
  { name: 'prometheus', commands: ['prometheus', 'promtool'] }, // the metrics tests check and scrape with them
  { name: 'curl', commands: ['curl'] }, // the docs' request examples run as written (test/first-contact/doc-examples.test.ts)
  { name: 'jq', commands: ['jq'] }, // which use it too
  { name: 'postgresql-15', files: ['/usr/lib/postgresql/15/bin/postgres', '/usr/lib/postgresql/15/bin/pg_dump', '/usr/lib/postgresql/15/bin/pg_restore'] }, // a server whose pg_dump matches it: the restore drill's pg_dump path
  { name: 'g++', commands: ['g++'] }, // g++, make and python3 build pkcs11js (node-gyp)
  { name: 'make', commands: ['make'] },
  { name: 'python3', commands: ['python3'] },
];

const NATIVE_BINDING = 'pkcs11js';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function onPath(command: string, path: string): boolean {
  return path.split(delimiter).some((folder) => {
    try {
      accessSync(join(folder || '.', command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The packages of which a command is not in `path` or a file is absent. */
export function missingPackages(path: string, packages: readonly SystemPackage[] = SYSTEM_PACKAGES): SystemPackage[] {
  return packages.filter(({ commands = [], files = [] }) => !commands.every((command) => onPath(command, path)) || !files.every((file) => existsSync(file)));
}

export type Decision = { kind: 'ready' } | { kind: 'install'; names: string[] } | { kind: 'refuse'; sentence: string };

/** What to do about `missing`: nothing, install them (root with apt-get), or say in one sentence what to run. */
export function decide(missing: readonly SystemPackage[], { root: isRoot, aptGet }: { root: boolean; aptGet: boolean }): Decision {
  if (missing.length === 0) return { kind: 'ready' };
  const names = missing.map(({ name }) => name);
  if (isRoot && aptGet) return { kind: 'install', names };
  const command = `${isRoot ? '' : 'sudo '}apt-get install -y --no-install-recommends ${names.join(' ')}`;
  return {
    kind: 'refuse',
    sentence: aptGet
      ? `The tests need Debian packages that are not installed (${names.join(', ')}): run \`${command}\`, then npm test again.`
      : `The tests need packages that are not installed and there is no apt-get to install them (${names.join(', ')}): install them with this system's package manager (on Debian: \`${command}\`), then run npm test again.`,
  };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  console.log(`$ ${command} ${args.join(' ')}`);
  return spawnSync(command, args, { cwd: root, env, stdio: 'inherit' }).status === 0;
}

function bindingLoads(): boolean {
  return spawnSync(process.execPath, ['-e', `require(${JSON.stringify(NATIVE_BINDING)})`], { cwd: root, stdio: 'ignore' }).status === 0;
}

function refuse(sentence: string): never {
  console.error(sentence);
  process.exit(1);
}

function main(): void {
  const path = process.env.PATH ?? '';
  const decision = decide(missingPackages(path), { root: process.getuid?.() === 0, aptGet: onPath('apt-get', path) });
  if (decision.kind === 'refuse') refuse(decision.sentence);
  if (decision.kind === 'install') {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    if (!run('apt-get', ['update'], env) || !run('apt-get', ['install', '-y', '--no-install-recommends', ...decision.names], env)) {
      refuse(`apt-get could not install ${decision.names.join(' ')} (its output is above).`);
    }
    const still = missingPackages(path);
    if (still.length > 0) refuse(`After apt-get install, what the tests need from ${still.map(({ name }) => name).join(', ')} is still not there (commands are looked up in PATH).`);
  }
  console.log(`Debian packages present: ${SYSTEM_PACKAGES.map(({ name }) => name).join(', ')}.`);

  if (!bindingLoads()) {
    // npm removes an optional dependency whose build failed, so the folder may be gone: install it again from the lockfile.
    const rebuilt = existsSync(join(root, 'node_modules', NATIVE_BINDING)) ? run('npm', ['rebuild', NATIVE_BINDING]) : run('npm', ['install', '--no-save', '--no-audit', '--no-fund']);
    if (!rebuilt || !bindingLoads()) refuse(`${NATIVE_BINDING} (the PKCS#11 binding) could not be built (npm's output is above).`);
  }
  console.log(`${NATIVE_BINDING} loads.`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
