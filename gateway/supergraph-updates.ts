/**
 * Schema changes without a restart: the gateway reads its subgraphs' SDL every
 * SUPERGRAPH_POLL_INTERVAL_MS (and at once on SIGUSR2), composes it when it changed, and hands the new
 * supergraph to @apollo/gateway through its public `supergraphSdl` hook (its `update` callback).
 * @apollo/gateway plans each request once, with the schema of its start, so a request in flight is
 * answered as it began. A composition that fails keeps the old supergraph, and says why in a log line
 * and in graphql_gateway_supergraph_checks_total.
 */
import type { SupergraphSdlHook } from '@apollo/gateway';
import type { FastifyBaseLogger } from 'fastify';
import type { ServerMetrics, SupergraphCheckOutcome } from '../lib/ops/metrics.js';
import { composeSubgraphs, fetchSubgraphSdl, type SubgraphEndpoint } from './composition.js';

/** The signal that makes the gateway look for a changed supergraph at once (SIGHUP stops a part: bin/lifecycle.ts). */
export const SUPERGRAPH_CHECK_SIGNAL = 'SIGUSR2';

export interface SupergraphUpdatesOptions {
  subgraphs: readonly SubgraphEndpoint[];
  /** The supergraph composed at start, from `sdls`. */
  supergraphSdl: string;
  pollIntervalMs: number;
  log: FastifyBaseLogger;
  metrics: ServerMetrics;
  /** Told of each new supergraph once the gateway serves it (the cost annotations, the supergraph file). */
  onUpdate(supergraphSdl: string): Promise<void> | void;
}

export class SupergraphUpdates {
  #current: string;
  #lastSdls: string | undefined;
  /** The subgraphs' SDL that last failed to compose: not composed again, nor logged again, until it changes. */
  #failedSdls: string | undefined;
  #update: ((supergraphSdl: string) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<SupergraphCheckOutcome> | undefined;
  readonly #onSignal = () => void this.check();

  constructor(private readonly options: SupergraphUpdatesOptions) {
    this.#current = options.supergraphSdl;
  }

  get supergraphSdl(): string {
    return this.#current;
  }

  /** @apollo/gateway's `supergraphSdl` option: the supergraph at start, and the `update` callback for later ones. */
  readonly hook: SupergraphSdlHook = async ({ update }) => {
    this.#update = update;
    if (this.options.pollIntervalMs > 0) this.#schedule();
    process.on(SUPERGRAPH_CHECK_SIGNAL, this.#onSignal);
    return { supergraphSdl: this.#current, cleanup: async () => this.#stop() };
  };

  /** Looks for a changed supergraph now (one look at a time: a second caller shares the first's). */
  check(): Promise<SupergraphCheckOutcome> {
    this.#checking ??= this.#check().finally(() => (this.#checking = undefined));
    return this.#checking;
  }

  async #check(): Promise<SupergraphCheckOutcome> {
    const outcome = await this.#look();
    this.options.metrics.supergraphChecked(outcome);
    return outcome;
  }

  async #look(): Promise<SupergraphCheckOutcome> {
    const { log, subgraphs } = this.options;
    let sdls: { name: string; url: string; sdl: string }[];
    try {
      sdls = await Promise.all(subgraphs.map(async (endpoint) => ({ name: endpoint.name, url: endpoint.url, sdl: await fetchSubgraphSdl(endpoint) })));
    } catch (error) {
      log.warn({ err: error }, 'supergraph kept: a subgraph did not give its schema');
      return 'fetch_failed';
    }
    // The same SDL as at the last look: nothing to compose.
    const key = JSON.stringify(sdls.map(({ sdl }) => sdl));
    if (key === this.#lastSdls || !this.#update) return 'unchanged';
    if (key === this.#failedSdls) return 'composition_failed';
    let supergraphSdl: string;
    try {
      supergraphSdl = composeSubgraphs(sdls);
      if (supergraphSdl !== this.#current) this.#update(supergraphSdl);
    } catch (error) {
      this.#failedSdls = key;
      log.error({ err: error }, `supergraph kept: the subgraphs' new schemas do not compose: ${(error as Error).message}`);
      return 'composition_failed';
    }
    this.#lastSdls = key;
    if (supergraphSdl === this.#current) return 'unchanged';
    this.#current = supergraphSdl;
    await this.options.onUpdate(supergraphSdl);
    log.info({ subgraphs: sdls.map(({ name }) => name) }, 'supergraph updated: the gateway serves the subgraphs’ new schemas');
    return 'updated';
  }

  #schedule(): void {
    this.#timer = setTimeout(async () => {
      await this.check();
      if (this.#timer) this.#schedule();
    }, this.options.pollIntervalMs);
    // A process waits for no look.
    this.#timer.unref();
  }

  #stop(): void {
    // A look still under way then changes nothing.
    this.#update = undefined;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    process.off(SUPERGRAPH_CHECK_SIGNAL, this.#onSignal);
  }
}
