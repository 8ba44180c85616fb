#!/usr/bin/env node
// Completes package-lock.json with the platform-specific optional packages (esbuild's, rollup's…)
// that npm leaves out when the registry it uses serves only this platform's builds: `npm ci`
// insists on an entry for every optional dependency. Each added entry carries the os/cpu/libc read
// from the package name, so `npm ci` skips it on other platforms without fetching anything.
// Run after changing dependencies: `npm install && npm run lockfile:complete`.
import { readFileSync, writeFileSync } from 'node:fs';

const OSES = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openbsd', 'netbsd', 'sunos', 'aix', 'openharmony'];
const CPUS = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 'riscv64', 's390x', 'loong64', 'mips64el', 'wasm32'];

function platformOf(name) {
  const tokens = name.split('/').pop().split(/[-_]/);
  const os = tokens.find((token) => OSES.includes(token)) ?? (tokens.includes('win') ? 'win32' : tokens.includes('wasi') ? 'wasi' : undefined);
  const cpu = tokens.find((token) => CPUS.includes(token)) ?? (tokens.includes('x86') ? 'ia32' : tokens.includes('arm64ec') ? 'arm64' : undefined);
  const libc = tokens.includes('musl') ? 'musl' : tokens.includes('gnu') && os === 'linux' ? 'glibc' : undefined;
  return { ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}), ...(libc ? { libc: [libc] } : {}) };
}

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path ? `${path}/` : ''}node_modules/${name}`;
    if (packages[nested] || packages[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform.os && !platform.cpu) continue;
    packages[`node_modules/${name}`] = { version: String(spec).replace(/^[\^~=]/, ''), ...(entry.dev ? { dev: true } : {}), optional: true, ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform-specific optional packages`);
