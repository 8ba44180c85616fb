/**
 * passport-verify: checks what the services sign, offline, against pinned anchors.
 *
 *   passport-verify pack <text|@file.txt|image.png> [--key-path <keys.json>] [pins]
 *   passport-verify log <export.json> [pins]
 *   passport-verify log <events.jsonl> --head <log-head.json> [pins]
 *   passport-verify snapshot <file.tar> --notarization <notarization.json> [pins]
 *   passport-verify path <graph.json|keys.json> --to <node> [--at <time>] [--kid <kid>] --anchors <bundle.json> [pins]
 *   passport-verify manifest <passport.json> --pack <text|@file.txt> [pins]
 *
 * pins: --pin <keyring.json|jwk.json|kids.txt|kid> (repeatable), --anchors <anchor-bundle.json>,
 *       --keyring <keyring.json> (repeatable: key material for kids pinned by thumbprint only).
 * Output: human-readable, or the report as JSON with --json. Exit: 0 valid, 1 invalid, 2 could not check.
 */
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { eventsFromJsonLines } from './log.js';
import { verifyManifest } from './manifest.js';
import { verifyMaterial, type Material } from './material.js';
import { verifyPackText } from './pack.js';
import { InputError, isKid, pinsFrom, type PinSet } from './pins.js';
import { isPng, readQrPng } from './qr.js';
import { EXIT_CODES, formatReport, makeReport, notChecked, type MaterialKind, type Report } from './report.js';
import { verifySnapshot } from './snapshot.js';

export const USAGE = `usage: passport-verify <command> <input> [options]

commands:
  pack <text|@file.txt|image.png> [--key-path <keys.json>]
                                       a Tier-A pack: its text, a file holding it, or a PNG of its QR code;
                                       with --key-path (GET /trust/keys/{kid}/path of its carrier kid), its
                                       issuer judged by the trust graph from --anchors, as the page judges it
  log <export.json>                    events and signed log head: GraphQL passport(id) { id events logHead }
  log <events.jsonl> --head <file>     the same as a snapshot stores them (data/passport/…)
  snapshot <file.tar> --notarization <file>
                                       an archive snapshot: BagIt, fixity, notarization, everything inside
  path <graph.json|keys.json> --to <node> [--at <time>] [--kid <kid>]
                                       a delegation path at a signing time, in an exported GET /trust/graph
                                       or in the signed trust path material of a key (GET /trust/keys/{kid}/path)
  manifest <passport.json> --pack <text|@file.txt>
                                       a passport's manifest and the disclosures its reader got
                                       (GET /issuer/passports/{id}) against the manifest digest of its pack

pinned anchors (saved earlier, trusted as given):
  --pin <file|kid>      a keyring (JWK Set, GET /keyring), one JWK, a text file of kids, or a kid; repeatable
  --anchors <file>      the trust anchor bundle (GET /trust/anchor-bundle): the roots a path starts from
  --keyring <file>      a keyring supplying material for keys pinned by kid only; repeatable

  --json                print the report as JSON
exit status: 0 valid, 1 invalid, 2 could not check`;

interface Options {
  command: string;
  input?: string;
  pins: string[];
  anchors?: string;
  keyrings: string[];
  json: boolean;
  head?: string;
  notarization?: string;
  to?: string;
  at?: string;
  kid?: string;
  keyPath?: string;
  pack?: string;
}

const COMMANDS: readonly MaterialKind[] = ['pack', 'log', 'snapshot', 'path', 'manifest'];
const VALUE_OPTIONS = new Set(['--pin', '--anchors', '--keyring', '--head', '--notarization', '--to', '--at', '--kid', '--key-path', '--pack']);

function parseArguments(argv: readonly string[]): Options {
  const [command, ...rest] = argv;
  if (command === undefined || !COMMANDS.includes(command as MaterialKind)) throw new InputError('USAGE', command === undefined ? 'no command given' : `unknown command ${command}`);
  const options: Options = { command, pins: [], keyrings: [], json: false };
  for (let index = 0; index < rest.length; index += 1) {
    const argument = rest[index]!;
    if (argument === '--json') options.json = true;
    else if (VALUE_OPTIONS.has(argument)) {
      const value = rest[(index += 1)];
      if (value === undefined) throw new InputError('USAGE', `${argument} needs a value`);
      if (argument === '--pin') options.pins.push(value);
      else if (argument === '--keyring') options.keyrings.push(value);
      else if (argument === '--key-path') options.keyPath = value;
      else options[argument.slice(2) as 'anchors' | 'head' | 'notarization' | 'to' | 'at' | 'kid' | 'pack'] = value;
    } else if (argument.startsWith('--')) throw new InputError('USAGE', `unknown option ${argument}`);
    else if (options.input === undefined) options.input = argument;
    else throw new InputError('USAGE', `unexpected argument ${argument}`);
  }
  if (options.input === undefined) throw new InputError('USAGE', `${command} needs its input`);
  return options;
}

function readBytes(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new InputError('UNREADABLE_INPUT', `cannot read ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function readText(path: string, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(readBytes(path, what));
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError('UNREADABLE_INPUT', `${what} ${path} is not UTF-8 text`);
  }
}

function readJson(path: string, what: string): unknown {
  const text = readText(path, what);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InputError('UNREADABLE_INPUT', `${what} ${path} is not JSON`);
  }
}

/** A --pin value: a kid, or a file of keys (JSON) or of kids (one per line, # comments). */
function loadPins(options: Options): PinSet {
  const keySets: unknown[] = [];
  const kids: string[] = [];
  for (const pin of options.pins) {
    if (isKid(pin) && !existsSync(pin)) {
      kids.push(pin);
      continue;
    }
    const text = readText(pin, 'pinned key file');
    if (text.trimStart().startsWith('{')) keySets.push(readJson(pin, 'pinned key file'));
    else
      kids.push(
        ...text
          .split(/\r?\n/)
          .map((line) => line.replace(/#.*/, '').trim())
          .filter((line) => line !== ''),
      );
  }
  return pinsFrom({
    keySets,
    kids,
    ...(options.anchors !== undefined && { anchorBundle: readJson(options.anchors, 'anchor bundle') }),
    keyrings: options.keyrings.map((path) => readJson(path, 'keyring')),
  });
}

async function verify(options: Options): Promise<Report> {
  const pins = loadPins(options);
  const input = options.input!;
  if (options.command === 'snapshot') {
    const notarization = options.notarization === undefined ? undefined : readJson(options.notarization, 'notarization');
    return verifySnapshot(readBytes(input, 'snapshot'), notarization, pins);
  }
  if (options.command === 'manifest') return verifyPassportManifest(options, input, pins);
  return verifyMaterial(readMaterial(options, input), pins);
}

/** A passport as a reader got it, against its pack: the pack first, then the manifest against the pack's claims. */
function verifyPassportManifest(options: Options, input: string, pins: PinSet): Report {
  if (options.pack === undefined) throw new InputError('USAGE', "manifest needs the passport's pack: --pack <text|@file.txt>");
  const passport = readJson(input, 'passport') as { manifest?: unknown; disclosures?: { disclosure?: unknown }[] };
  const disclosures = (passport?.disclosures ?? []).map((entry) => entry?.disclosure);
  if (passport?.manifest === null || typeof passport?.manifest !== 'object' || disclosures.some((text) => typeof text !== 'string')) {
    throw new InputError('MALFORMED_PASSPORT', `${input} is not a passport as GET /issuer/passports/{id} answers it (manifest, disclosures)`);
  }
  const pack = verifyPackText(options.pack.startsWith('@') ? readText(options.pack.slice(1), 'pack file') : options.pack, pins);
  if (pack.report.verdict !== 'valid' || !pack.claims) {
    return makeReport('manifest', pack.report.subject, [...pack.report.findings, notChecked('manifest.digest', 'PACK_NOT_VERIFIED', 'a manifest is checked against a pack that verifies')]);
  }
  const manifest = verifyManifest(pack.claims, passport.manifest as Record<string, unknown>, disclosures as string[]);
  return makeReport('manifest', pack.claims.sub, [...pack.report.findings, ...manifest.report.findings]);
}

/** The material the command names, read from its files. */
function readMaterial(options: Options, input: string): Material {
  switch (options.command) {
    case 'pack': {
      let text: string;
      if (input.startsWith('@')) text = readText(input.slice(1), 'pack file');
      else if (/\.png$/i.test(input) || (existsSync(input) && isPng(readBytes(input, 'image')))) text = readQrPng(readBytes(input, 'QR image'));
      else text = input;
      return { kind: 'pack', text, ...(options.keyPath !== undefined && { keyPath: readJson(options.keyPath, 'trust path material') }) };
    }
    case 'log': {
      if (options.head !== undefined || input.endsWith('.jsonl')) {
        if (options.head === undefined) throw new InputError('USAGE', 'events as JSON Lines need their signed head: --head <log-head.json>');
        const head = readJson(options.head, 'log head') as { passport_id?: unknown };
        if (typeof head?.passport_id !== 'string') throw new InputError('MALFORMED_EXPORT', `${options.head} is not a log head`);
        const lines = eventsFromJsonLines(readText(input, 'events file'));
        return { kind: 'log', log: { passportId: head.passport_id, events: lines.events, texts: lines.texts, head } };
      }
      return { kind: 'log', log: readJson(input, 'log export') };
    }
    default: {
      if (options.to === undefined) throw new InputError('USAGE', 'path needs the node: --to <node id>');
      const question = { to: options.to, at: options.at ?? new Date().toISOString(), ...(options.kid !== undefined && { kid: options.kid }) };
      return { kind: 'path', graph: readJson(input, 'trust graph'), question };
    }
  }
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command line (without `node` and the script) and says what to print and how to exit. */
export async function run(argv: readonly string[]): Promise<CliResult> {
  const json = argv.includes('--json');
  if (argv.includes('--help') || argv.includes('-h')) return { code: 0, stdout: `${USAGE}\n`, stderr: '' };
  let report: Report;
  try {
    report = await verify(parseArguments(argv));
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const kind = COMMANDS.includes(argv[0] as MaterialKind) ? (argv[0] as MaterialKind) : 'pack';
    report = makeReport(kind, '(input)', [notChecked('input', error.code, error.message)]);
    const usage = error.code === 'USAGE' ? `${USAGE}\n` : '';
    return json ? { code: 2, stdout: `${JSON.stringify({ ...report, exit_code: 2 }, null, 2)}\n`, stderr: usage } : { code: 2, stdout: '', stderr: `${formatReport(report)}${usage}` };
  }
  const code = EXIT_CODES[report.verdict];
  return { code, stdout: json ? `${JSON.stringify({ ...report, exit_code: code }, null, 2)}\n` : formatReport(report), stderr: '' };
}

/** `run`, with an unexpected error said on stderr and exit status 2, as the command ends on one. */
export async function runToEnd(argv: readonly string[]): Promise<CliResult> {
  try {
    return await run(argv);
  } catch (error) {
    return { code: 2, stdout: '', stderr: `passport-verify: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` };
  }
}

/** Runs the command line of this process: prints, and sets the exit status. */
export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const result = await runToEnd(argv);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.code;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
