/**
 * Prisma's schema engine compiled to WebAssembly (npm `@prisma/schema-engine-wasm`), driven through
 * the `pg` driver adapter. It replaces the native schema-engine binary, which Prisma downloads from
 * its own host at run time and which locked-down machines cannot reach (see docs/PRISMA.md).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { AsyncLocalStorage } from 'node:async_hooks';
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum } from '@prisma/driver-adapter-utils';
import * as glue from '@prisma/schema-engine-wasm/schema_engine_bg';
import pg from 'pg';
import { clientConfig, parseDatabaseUrl, type DatabaseTarget } from '../../lib/db/postgres.js';

export type SchemaEngine = glue.SchemaEngine;

// Node's global; the ES library typings leave WebAssembly to the DOM library, which this project does not load.
declare const WebAssembly: {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: Record<string, unknown> } }>;
};

/** PostgreSQL's internal single-byte `"char"` type, which catalog queries return and adapter-pg cannot decode. */
const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

let wasmReady: Promise<void> | undefined;

function loadWasm(): Promise<void> {
  wasmReady ??= (async () => {
    (globalThis as { PRISMA_WASM_PANIC_REGISTRY?: unknown }).PRISMA_WASM_PANIC_REGISTRY = {
      set_message(message: string) {
        process.stderr.write(`schema engine panic: ${message}\n`);
      },
    };
    const packageDir = dirname(createRequire(import.meta.url).resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bytes = await readFile(join(packageDir, 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': glue });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
  })();
  return wasmReady;
}

/** Column indexes of `"char"` columns in the result the current query is reading. */
const charColumns = new AsyncLocalStorage<number[]>();

/**
 * Lets catalog queries return PostgreSQL's `"char"` columns (e.g. `pg_constraint.contype`): they
 * reach adapter-pg as text, which it decodes, and leave it typed as a character, which the engine's
 * schema describer expects. Applied to the adapter classes once, in the schema engine's process only;
 * the services' query path never sees it.
 */
function decodeCharColumns(adapter: object): void {
  type Queryable = {
    performIO?: (...args: unknown[]) => Promise<pg.QueryResult>;
    queryRaw?: (...args: unknown[]) => Promise<{ columnTypes: number[] }>;
    __charColumns?: boolean;
  };
  let prototype = Object.getPrototypeOf(adapter) as Queryable | null;
  while (prototype && !Object.hasOwn(prototype, 'performIO')) prototype = Object.getPrototypeOf(prototype) as Queryable | null;
  if (!prototype?.performIO || !prototype.queryRaw || prototype.__charColumns) return;
  const { performIO, queryRaw } = prototype;
  prototype.performIO = async function (this: unknown, ...args: unknown[]) {
    const result = await performIO.apply(this, args);
    const columns = charColumns.getStore();
    result.fields.forEach((field, index) => {
      if (field.dataTypeID !== PG_CHAR_OID) return;
      field.dataTypeID = PG_TEXT_OID;
      columns?.push(index);
    });
    return result;
  };
  prototype.queryRaw = async function (this: unknown, ...args: unknown[]) {
    const columns: number[] = [];
    const result = await charColumns.run(columns, () => queryRaw.apply(this, args));
    for (const index of columns) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  prototype.__charColumns = true;
}

class MigrationAdapterFactory extends PrismaPg {
  readonly #target: DatabaseTarget;
  /** Adapters handed to the engine; the engine never disposes them, and they hold its advisory lock. */
  readonly opened: { dispose(): Promise<void> }[] = [];

  constructor(target: DatabaseTarget, config: pg.PoolConfig) {
    super(config, { schema: target.schema });
    this.#target = target;
  }

  override async connect() {
    await ensureSchema(this.#target, this.#target.database);
    const adapter = await super.connect();
    decodeCharColumns(adapter);
    this.opened.push(adapter);
    return adapter;
  }

  /**
   * adapter-pg's own shadow database ignores `database` when given a URL and drops the database
   * while its pool still holds connections; this one connects by parts and closes before dropping.
   */
  override async connectToShadowDb() {
    const target = this.#target;
    const shadowName = `${target.database}_shadow_${process.pid}_${Date.now()}`;
    const admin = new pg.Client(clientConfig(target, target.database));
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${shadowName}"`);
    } finally {
      await admin.end();
    }
    await ensureSchema(target, shadowName);
    const shadow = await new PrismaPg(clientConfig(target, shadowName), { schema: target.schema }).connect();
    decodeCharColumns(shadow);
    const dispose = shadow.dispose.bind(shadow);
    shadow.dispose = async () => {
      await dispose();
      const cleanup = new pg.Client(clientConfig(target, target.database));
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS "${shadowName}"`);
      } finally {
        await cleanup.end();
      }
    };
    return shadow;
  }
}

/**
 * The engine writes unqualified names (`_prisma_migrations`, the migrations' own tables), so every
 * connection works inside the service's schema through its search path.
 */

async function ensureSchema(target: DatabaseTarget, database: string): Promise<void> {
  const client = new pg.Client(clientConfig(target, database));
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}

export interface EngineOptions {
  url: string;
  /** Prisma schema files as [path, content] pairs, as the CLI passes them. */
  datamodels?: [string, string][];
  log?: (line: string) => void;
}

export interface OpenSchemaEngine {
  engine: SchemaEngine;
  /** Frees the engine and closes its connections, releasing its migration lock. */
  close(): Promise<void>;
}

export async function openSchemaEngine(options: EngineOptions): Promise<OpenSchemaEngine> {
  await loadWasm();
  const target = parseDatabaseUrl(options.url);
  const factory = new MigrationAdapterFactory(target, { ...clientConfig(target, target.database), max: 2 });
  const log = options.log ?? (() => {});
  const engine = await glue.SchemaEngine.new({ datamodels: options.datamodels }, log, bindMigrationAwareSqlAdapterFactory(factory));
  return {
    engine,
    async close() {
      engine.free();
      await Promise.all(factory.opened.map((adapter) => adapter.dispose()));
    },
  };
}
