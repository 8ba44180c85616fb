/**
 * A PostgreSQL of a test file's own, for tests that stop it under a running platform and start it
 * again on the same folder and port (the run's shared PostgreSQL must stay up for the other files).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from '../../lib/db/embedded-postgres.js';
import { freePort } from './free-port.js';

export class OwnPostgres {
  private constructor(
    private readonly dataDir: string,
    private readonly port: number,
    private running: RunningPostgres,
  ) {}

  static async start(name: string): Promise<OwnPostgres> {
    const dataDir = await mkdtemp(join(tmpdir(), `passport-${name}-`));
    const port = await freePort();
    return new OwnPostgres(dataDir, port, await startEmbeddedPostgres({ dataDir, port }));
  }

  get url(): string {
    return this.running.url;
  }

  get clusterDir(): string {
    return this.running.clusterDir;
  }

  stop(): Promise<void> {
    return this.running.stop();
  }

  /** Started again on the same folder and port, so the platform's URLs still lead to it. */
  async restart(): Promise<void> {
    this.running = await startEmbeddedPostgres({ dataDir: this.dataDir, port: this.port });
  }

  /** Stopped, and its folder removed. */
  async remove(): Promise<void> {
    await this.running.stop();
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
