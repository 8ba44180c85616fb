#!/usr/bin/env node
// `node bin/run.mjs <entry.ts> [args…]`: runs one of the platform's commands (npm start, npm run
// subgraph|gateway|facade|keys|…) from a compiled build instead of through tsx. Loading the platform's
// TypeScript through tsx's module hooks costs a process 4–5.5 s of CPU; the same code bundled by esbuild
// (our code in chunks, packages left to node_modules) loads in about half that.
//
// The build lives in node_modules/.cache/passport-build/ (so `npm ci` starts it afresh) and is made on
// the first run after any change: a manifest lists every source file the build read, with its size,
// mtime and SHA-256; a run whose sources all still match (mtime and size, else the hash) uses the build,
// otherwise esbuild (a runtime dependency) builds all entries again, about a second, into a new folder
// that replaces the old one by a rename, so processes starting side by side never see half a build.
// Stack traces name the .ts lines: the build's own source maps, read when a trace first passes through a
// chunk (see buildSourceMaps). Where the build cannot be written (a read-only
// checkout, another user's node_modules) the command runs through tsx as before.
// `node bin/run.mjs --build` only brings the build up to date (the test layers do it once ahead).
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'passport-build');
const MANIFEST = join(CACHE, 'manifest.json');
/** The commands run compiled; each is built to `<its file name>.mjs` (so the names must differ). */
export const ENTRIES = [
  'bin/start.ts',
  'bin/subgraph.ts',
  'bin/gateway.ts',
  'bin/facade.ts',
  'bin/keys.ts',
  'bin/tokens.ts',
  'bin/migrate.ts',
  'bin/backup.ts',
  'bin/restore.ts',
  'bin/formats-examples.ts',
  'verifier/cli.ts',
  // Writing a migration (a developer's command: its schema engine is a devDependency).
  'prisma/tools/new-migration.ts',
];
/** Changes when the build's settings below change, so an older build is not used. */
const BUILD_VERSION = 2;
/** Files that shape the output besides the sources esbuild reports reading. */
const SETTINGS_FILES = ['tsconfig.json', 'bin/run.mjs'];
const entryName = (entry) => basename(entry).replace(/\.ts$/, '');

function hashFile(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** The build folder the manifest names, if every file it was built from is unchanged. */
function currentBuild() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return undefined;
  }
  if (manifest.version !== BUILD_VERSION || ENTRIES.some((entry) => !manifest.entries.includes(entry))) return undefined;
  for (const [file, [size, mtimeMs, hash]] of Object.entries(manifest.inputs)) {
    const path = join(ROOT, file);
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return undefined;
    }
    // mtime and size first (a stat each); a file touched but not changed (a checkout, an editor) is hashed.
    if (stats.size === size && stats.mtimeMs === mtimeMs) continue;
    if (stats.size !== size || hashFile(path) !== hash) return undefined;
  }
  return join(CACHE, manifest.build);
}

/** A module that declares a class (`class X`, `abstract class X`), whose names are kept (below). */
const DECLARES_CLASS = /^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s/m;

/**
 * What our sources become before they are bundled. esbuild bundles each module into a chunk, so
 * `import.meta.url` would name the chunk; the code finds its neighbours (migrations, GraphiQL's files,
 * docs, the verification page's sources, package.json) from it. Each source's `import.meta.url`
 * becomes its own file's URL, made relative to the chunk's so that a copied or moved checkout still
 * points into itself. Every output file sits in the build folder itself (no subfolders), so that
 * relative path is the same from any chunk.
 *
 * Names are kept where they are read: a class's name is its GraphQL type name (type-graphql) and an
 * error's `type` in a log line, and bundling renames a top-level class whose name another module of
 * the chunk uses too. A module that declares a class is compiled alone with esbuild's keepNames (every
 * function of it keeps its source name) before it is bundled; the bundle keeps no names of its own.
 * keepNames wraps each function expression given a name in a call that defines its `name`, at every
 * closure made: about 20 of each GraphQL operation's (the cost limit's, the subgraph fetch's), a
 * defineProperty each. Elsewhere a function has the name V8 gives it from its source, which differs
 * only where bundling renamed a clashing one (`helper2` in a stack trace, whose file and line still
 * name the .ts).
 */
function sourcePlugin(buildDir) {
  const tsconfigRaw = readFileSync(join(ROOT, 'tsconfig.json'), 'utf8');
  return {
    name: 'passport-sources',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        let source = readFileSync(args.path, 'utf8');
        const loader = args.path.endsWith('ts') ? 'ts' : 'js';
        const locates = source.includes('import.meta.url');
        const declaresClass = DECLARES_CLASS.test(source);
        if (!locates && !declaresClass) return undefined;
        if (locates) {
          const fromChunk = relative(buildDir, args.path).split(sep).join('/');
          source = source.replace(/\bimport\.meta\.url\b/g, `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`);
        }
        if (!declaresClass) return { contents: source, loader };
        // Its own source map goes along inline, and the bundle's maps through it to the .ts lines.
        const { transform } = await import('esbuild');
        const compiled = await transform(source, { loader, format: 'esm', target: 'node20', keepNames: true, tsconfigRaw, sourcemap: 'inline', sourcefile: basename(args.path) });
        return { contents: compiled.code, loader: 'js' };
      });
    },
  };
}

/** Builds every entry into a new folder and points the manifest at it; older builds over a day old go. */
async function buildAll() {
  mkdirSync(CACHE, { recursive: true });
  // Fails with EACCES where the folder is another user's (esbuild's own error would not say so by code).
  accessSync(CACHE, constants.W_OK);
  const { build } = await import('esbuild');
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const staging = join(CACHE, `staging-${id}`);
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(ENTRIES.map((entry) => [entryName(entry), entry])),
    outdir: staging,
    bundle: true,
    // Packages load from node_modules as they do under tsx; only our code is bundled.
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Chunks shared by the entries, and the modules loaded late (bin/stack.ts loads the servers once
    // the database answers) stay chunks of their own, loaded when imported.
    splitting: true,
    chunkNames: '[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    // Kept only in modules that declare a class (sourcePlugin).
    keepNames: false,
    sourcemap: 'linked',
    sourcesContent: false,
    tsconfig: join(ROOT, 'tsconfig.json'),
    metafile: true,
    logLevel: 'error',
    // The chunks' URL is only known by depth: one level below CACHE, as the final folder will be.
    plugins: [sourcePlugin(staging)],
  });
  const inputs = {};
  for (const file of [...Object.keys(result.metafile.inputs), ...SETTINGS_FILES]) {
    const stats = statSync(join(ROOT, file));
    inputs[file] = [stats.size, stats.mtimeMs, hashFile(join(ROOT, file))];
  }
  renameSync(staging, join(CACHE, id));
  const written = join(CACHE, `manifest-${id}.json`);
  writeFileSync(written, JSON.stringify({ version: BUILD_VERSION, build: id, entries: ENTRIES, inputs }));
  renameSync(written, MANIFEST);
  // A process started from an older build may still load its late chunks, so only day-old builds go.
  const dayAgo = Date.now() - 86_400_000;
  for (const name of readdirSync(CACHE)) {
    if (name === id || name === 'manifest.json') continue;
    try {
      if (statSync(join(CACHE, name)).mtimeMs < dayAgo) rmSync(join(CACHE, name), { recursive: true, force: true });
    } catch {
      // Removed meanwhile by another build's clean-up.
    }
  }
  return join(CACHE, id);
}

/** The build folder, built first if any source changed; undefined where it cannot be written. */
export async function upToDateBuild() {
  const current = currentBuild();
  if (current) return current;
  try {
    return await buildAll();
  } catch (error) {
    if (['EACCES', 'EPERM', 'EROFS'].includes(error?.code)) return undefined;
    throw error;
  }
}

/**
 * Stack traces that name the .ts lines of frames in the build, and leave every other frame as V8
 * wrote it. Node 20's source-map support (--enable-source-maps, process.setSourceMapsEnabled) is for
 * every module or none: on, it reads and parses the map of each module as it loads, and the packages
 * in node_modules ship ~560 maps (7 MB of JSON) that a start then reads for nothing, ~0.3 CPU-s with
 * the garbage. Here a chunk's map is read the first time a trace passes through that chunk.
 */
export function buildSourceMaps(buildDir) {
  const prefix = `${pathToFileURL(buildDir).href}/`;
  const maps = new Map();
  const mapOf = (fileUrl) => {
    if (!maps.has(fileUrl)) {
      let map = null;
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(fileUrl)}.map`, 'utf8')));
      } catch {
        // No map (or an unreadable one): the frame stays as it is.
      }
      maps.set(fileUrl, map);
    }
    return maps.get(fileUrl);
  };
  const frame = (site) => {
    const text = String(site);
    const file = site.getFileName();
    if (!file?.startsWith(prefix)) return text;
    const line = site.getLineNumber();
    const column = site.getColumnNumber();
    const entry = mapOf(file)?.findEntry(line - 1, column - 1);
    if (!entry?.originalSource) return text;
    const original = fileURLToPath(new URL(entry.originalSource, file));
    return text.replace(`${file}:${line}:${column}`, `${original}:${entry.originalLine + 1}:${entry.originalColumn + 1}`);
  };
  Error.prepareStackTrace = (error, sites) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = '<error>';
    }
    return [head, ...sites.map((site) => `    at ${frame(site)}`)].join('\n');
  };
}

const [entry, ...args] = process.argv.slice(2);
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (entry === '--build') {
    // Not a failure: the commands still run, through tsx.
    if (!(await upToDateBuild())) console.error(`The compiled build cannot be written in ${CACHE}; the commands run through tsx.`);
  } else if (!entry) {
    console.error(`usage: node bin/run.mjs <${ENTRIES.join('|')}> [arguments]`);
    process.exit(2);
  } else {
    const source = resolve(ROOT, entry);
    const known = ENTRIES.includes(relative(ROOT, source).split(sep).join('/'));
    const build = known ? await upToDateBuild() : undefined;
    // The command sees the arguments it would under `node --import tsx <entry>`.
    process.argv = [process.argv[0], source, ...args];
    if (build) {
      buildSourceMaps(build);
      await import(pathToFileURL(join(build, `${entryName(entry)}.mjs`)).href);
    } else {
      const { register } = await import('tsx/esm/api');
      register();
      await import(pathToFileURL(source).href);
    }
  }
}
