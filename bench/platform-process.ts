/**
 * The all-in-one platform as `npm start` runs it, in a child process of its own (its own process
 * group, so that a crash can be simulated by SIGKILL to everything it started), on a data folder
 * and ports that stay the same across restarts, with tokens the soak run knows.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashToken, type ConfiguredRole } from '../lib/auth/tokens.js';
import { clusterUrl, readEmbeddedCluster } from '../lib/config/database.js';
import { lockingPostmaster } from '../lib/db/embedded-postgres.js';
import { SERVICES, type ServiceName } from '../lib/config/services.js';
import { freePort, REPO_ROOT } from './support.js';

export interface PlatformProcessOptions {
  dataDir: string;
  /** Extra `--import` modules for the child (the loopback guard). */
  imports?: readonly string[];
  /** Extra flags for node (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  nodeFlags?: readonly string[];
  /** Extra environment for the child (its LOG_LEVEL included; `info` when not given). */
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export type Tokens = Record<ConfiguredRole, string>;

/**
 * Platforms started and not yet stopped. Each runs in a process group of its own, which the
 * terminal's Ctrl-C does not reach: a benchmark interrupted (SIGINT, SIGTERM) or ending without
 * stopping them asks each to stop (SIGTERM: it stops its PostgreSQL too) rather than leave them running.
 */
const running = new Set<ChildProcess>();
let stopsOnInterrupt = false;
function stopRunningPlatformsOnExit(): void {
  if (stopsOnInterrupt) return;
  stopsOnInterrupt = true;
  const stopAll = () => {
    for (const child of running) child.kill('SIGTERM');
  };
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      stopAll();
      process.exit(code);
    });
  }
  process.once('exit', stopAll);
}

export class PlatformProcess {
  private child: ChildProcess | undefined;
  private output: string[] = [];

  private constructor(
    readonly dataDir: string,
    readonly tokens: Tokens,
    private readonly env: NodeJS.ProcessEnv,
    readonly facadeUrl: string,
    readonly gatewayUrl: string,
    private readonly options: PlatformProcessOptions,
  ) {}

  /** Prepares the folder (tokens, ports) without starting anything. */
  static async prepare(options: PlatformProcessOptions): Promise<PlatformProcess> {
    mkdirSync(options.dataDir, { recursive: true });
    const tokens: Tokens = { admin: `soak-admin-${randomBytes(16).toString('hex')}`, writer: `soak-writer-${randomBytes(16).toString('hex')}` };
    // bin/start.ts creates tokens only when this file is absent, so the soak run's own are used.
    writeFileSync(
      join(options.dataDir, 'tokens.json'),
      `${JSON.stringify(
        (['admin', 'writer'] as const).map((role) => ({ name: `soak-${role}`, role, sha256: hashToken(tokens[role]) })),
        null,
        2,
      )}\n`,
      { mode: 0o600 },
    );
    const ports: Record<string, string> = { FACADE_PORT: String(await freePort()), GATEWAY_PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()), METRICS_PORT: '0' };
    for (const service of SERVICES) ports[`${service.toUpperCase()}_SUBGRAPH_PORT`] = String(await freePort());
    const env = { ...process.env, ...options.env, ...ports, HOST: '127.0.0.1', PASSPORT_DATA_DIR: options.dataDir, LOG_LEVEL: options.env?.LOG_LEVEL ?? 'info' };
    return new PlatformProcess(options.dataDir, tokens, env, `http://127.0.0.1:${ports.FACADE_PORT}`, `http://127.0.0.1:${ports.GATEWAY_PORT}/graphql`, options);
  }

  /** The REST base of a service on the facade. */
  base(service: ServiceName): string {
    return `${this.facadeUrl}/${service}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts `bin/start.ts` and waits until it says it is running (or gives up after `timeoutMs`). */
  async start(timeoutMs = 120_000): Promise<number> {
    if (this.child) throw new Error('the platform is already running');
    const started = performance.now();
    // As `npm start` runs it (bin/run.mjs: the compiled build); modules to load first may be TypeScript, so tsx comes with them.
    const extra = this.options.imports ?? [];
    const imports = (extra.length ? ['tsx', ...extra] : []).flatMap((module) => ['--import', module]);
    const child = spawn(process.execPath, [...(this.options.nodeFlags ?? []), ...imports, join(REPO_ROOT, 'bin', 'run.mjs'), 'bin/start.ts'], {
      cwd: REPO_ROOT,
      env: this.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    stopRunningPlatformsOnExit();
    this.output = [];
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the platform did not start within ${timeoutMs} ms:\n${this.output.slice(-20).join('\n')}`)), timeoutMs);
      const onLine = (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (!line) continue;
          this.output.push(line);
          // The last lines are what an error needs; a long run at LOG_LEVEL=info must not keep all of them.
          if (this.output.length > 2000) this.output.splice(0, 1000);
          this.options.log?.(line);
          if (line.includes('Passport services are running.')) {
            clearTimeout(timer);
            resolve();
          }
        }
      };
      child.stdout!.on('data', onLine);
      child.stderr!.on('data', onLine);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the platform exited (${signal ?? code}) before it was ready:\n${this.output.slice(-20).join('\n')}`));
      });
    });
    try {
      await ready;
    } catch (error) {
      this.killGroup('SIGKILL');
      this.child = undefined;
      throw error;
    }
    return performance.now() - started;
  }

  /** The whole process group at once, as a power cut or the OOM killer would end it. */
  async crash(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    this.killGroup('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** A clean stop (SIGTERM), as an operator would; resolves with the exit code. */
  async stop(timeoutMs = 60_000): Promise<number | null> {
    const child = this.child;
    if (!child) return null;
    const exited = new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
    child.kill('SIGTERM');
    const timer = setTimeout(() => this.killGroup('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(timer);
    this.child = undefined;
    return code;
  }

  /** The services' database in the platform's embedded cluster (its URL is written when the cluster is made). */
  databaseUrl(): string {
    const cluster = readEmbeddedCluster({ PASSPORT_DATA_DIR: this.dataDir });
    if (!cluster) throw new Error(`no embedded cluster in ${this.dataDir}`);
    return clusterUrl(cluster);
  }

  /** The PostgreSQL still holding the cluster's lock file, if any, as the next start would judge it. */
  postmasterPid(): Promise<number | undefined> {
    return lockingPostmaster(join(this.dataDir, 'postgres'));
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (!this.child?.pid) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      // Already gone.
    }
  }
}
