/**
 * The command line of Prisma's native schema engine, served by the WebAssembly engine, so that
 * `prisma migrate deploy|dev|status|diff|reset` and `db push|pull` run without Prisma's binary host.
 *
 *   schema-engine --version
 *   schema-engine --datasource '{"url":…}' cli can-connect-to-database|create-database
 *   schema-engine --datamodels <file>… --datasource '{"url":…}'    (JSON-RPC on stdin/stdout)
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { openSchemaEngine, type SchemaEngine } from './wasm-engine.js';
import { ensureDatabase, parseDatabaseUrl } from '../../lib/db/postgres.js';

const ENGINE_VERSION = 'schema-engine-cli 59be4fda12412a79eeb9c2ae727b6aa723593323 (wasm)';
/** Prisma's error code for "database does not exist", which makes the CLI create it. */
const DATABASE_MISSING = 'P1003';

interface CommandLine {
  datamodels: string[];
  url?: string;
  cli: string[];
  version: boolean;
}

function parseCommandLine(args: string[]): CommandLine {
  const line: CommandLine = { datamodels: [], cli: [], version: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--version' || arg === '-V') line.version = true;
    else if (arg === '--datamodels') line.datamodels.push(args[++i]!);
    else if (arg === '--datasource') line.url = (JSON.parse(args[++i]!) as { url?: string }).url;
    else if (arg === 'cli') line.cli = args.slice(i + 1);
    // Other flags (preview features, extension types) do not change what the engine does here.
    else if (arg.startsWith('--')) i++;
  }
  return line;
}

/** One log line in the engine's tracing format; the CLI reads `level`, `target` and `fields`. */
function logLine(level: 'INFO' | 'ERROR', message: string, errorCode?: string): string {
  return JSON.stringify({ timestamp: new Date().toISOString(), level, target: 'schema_engine::logger', fields: { message, ...(errorCode ? { error_code: errorCode } : {}) } });
}

async function runCliCommand(url: string, command: string): Promise<number> {
  // The CLI skips the first stderr line of one-shot commands.
  process.stderr.write(`${logLine('INFO', `schema engine (wasm) ${command}`)}\n`);
  if (command === 'create-database') {
    await ensureDatabase(url);
    return 0;
  }
  if (command === 'can-connect-to-database') {
    const target = parseDatabaseUrl(url);
    const client = new pg.Client({ host: target.host, port: target.port, user: target.user, password: target.password, database: target.database });
    try {
      await client.connect();
      return 0;
    } catch (error) {
      const missing = (error as { code?: string }).code === '3D000';
      process.stderr.write(`${logLine('ERROR', (error as Error).message, missing ? DATABASE_MISSING : 'P1001')}\n`);
      return 1;
    } finally {
      await client.end().catch(() => {});
    }
  }
  process.stderr.write(`${logLine('ERROR', `unknown cli command ${command}`)}\n`);
  return 1;
}

interface RpcRequest {
  id: number | string;
  method?: string;
  params?: Record<string, unknown>;
}

/** JSON-RPC method names the CLI uses that the WebAssembly engine spells differently. */
const METHOD_ALIASES: Record<string, string> = { getDatabaseVersion: 'version' };

function serveJsonRpc(engine: SchemaEngine): Promise<void> {
  let requestsToCli = 0;
  const send = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  const pending: Promise<void>[] = [];
  lines.on('line', (text) => {
    if (!text.trim()) return;
    const request = JSON.parse(text) as RpcRequest;
    // Lines without a method are the CLI's replies to our own `print` requests.
    if (!request.method) return;
    pending.push(handle(request));
  });
  async function handle(request: RpcRequest): Promise<void> {
    const method = METHOD_ALIASES[request.method!] ?? request.method!;
    const call = (engine as unknown as Record<string, (params: unknown) => Promise<unknown>>)[method];
    if (typeof call !== 'function') {
      send({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } });
      return;
    }
    try {
      let result = await call.call(engine, request.params ?? {});
      if (method === 'diff') {
        // The native binary prints the diff by asking the CLI to print it, then answers the exit code.
        const { exitCode, stdout } = result as { exitCode: number; stdout: string | null };
        if (stdout) send({ jsonrpc: '2.0', id: `print-${++requestsToCli}`, method: 'print', params: { content: stdout } });
        result = { exitCode };
      }
      send({ jsonrpc: '2.0', id: request.id, result: result ?? null });
    } catch (error) {
      const failure = error as { message?: string; error_code?: string; meta?: unknown };
      send({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: 4466, message: 'An error happened. Check the data field for details.', data: { is_panic: false, message: failure.message ?? String(error), error_code: failure.error_code, meta: failure.meta } },
      });
    }
  }
  return new Promise((resolve) => lines.on('close', () => void Promise.allSettled(pending).then(() => resolve())));
}

async function main(): Promise<number> {
  const line = parseCommandLine(process.argv.slice(2));
  if (line.version) {
    process.stdout.write(`${ENGINE_VERSION}\n`);
    return 0;
  }
  if (line.cli.length > 0) {
    if (!line.url) throw new Error('cli commands need --datasource');
    return runCliCommand(line.url, line.cli[0]!);
  }
  if (!line.url) throw new Error('the WebAssembly schema engine needs --datasource: give the config a datasource url');
  const datamodels = line.datamodels.map((file): [string, string] => [file, readFileSync(file, 'utf8')]);
  const { engine, close } = await openSchemaEngine({ url: line.url, datamodels, log: (entry) => process.stderr.write(`${entry}\n`) });
  try {
    await serveJsonRpc(engine);
  } finally {
    await close();
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${logLine('ERROR', error instanceof Error ? error.message : String(error))}\n`);
    process.exit(1);
  },
);
