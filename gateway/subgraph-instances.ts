/**
 * A subgraph's instances (its replicas, or the one URL) as the gateway reaches them: every request
 * has a deadline, every instance a circuit breaker (cockatiel), and a query whose request fails to
 * connect is sent once more to another instance. A subgraph that cannot be asked is a
 * SubgraphUnavailable, which the data source answers as SUBGRAPH_UNAVAILABLE (data-source.ts).
 */
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleAll, type CircuitBreakerPolicy } from 'cockatiel';
import { DeadlineExceeded } from '../lib/http/post-json.js';
import type { CircuitStateName } from '../lib/ops/metrics.js';
import { isQuery, type JsonPost } from './subgraph-batching.js';

/** Failed requests in a row that open an instance's circuit. */
export const FAILURES_TO_OPEN = 5;
/** When a client may ask again after a deadline or a failed connection (an open circuit says its own). */
const RETRY_AFTER_SECONDS = 5;

const STATE_NAMES: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  // Never used here (nothing isolates a breaker); open is what it would mean.
  [CircuitState.Isolated]: 'open',
};

/** Why a subgraph could not be asked: no answer by its deadline, a connection that failed, or its circuit open. */
export type UnavailableReason = 'deadline' | 'connection' | 'circuit_open';

/** A network error's code (ECONNRESET, …), or `network`. */
export function networkErrorType(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : 'network';
}

export class SubgraphUnavailable extends Error {
  /** What the fetch metrics count it as: `deadline`, `circuit_open`, or the connection's error code. */
  readonly errorType: string;

  constructor(
    readonly subgraph: string,
    readonly reason: UnavailableReason,
    detail: string,
    /** When the client may try again, in seconds. */
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(detail, options);
    this.errorType = reason === 'connection' ? networkErrorType(options?.cause) : reason;
  }
}

interface Instance {
  url: string;
  /** `trust`, or `trust#2` of several: the names readiness and metrics give it. */
  label: string;
  breaker: CircuitBreakerPolicy;
  openedAt: number;
}

export interface SubgraphInstancesOptions {
  name: string;
  urls: readonly string[];
  timeoutMs: number;
  /** How long an open circuit refuses before one request probes the instance (half-open). */
  circuitOpenMs: number;
  /** Told of every change of an instance's circuit (logs, metrics), and of the initial closed state. */
  onCircuitChange?(instance: string, state: CircuitStateName): void;
  /** Told when a query is sent again to another instance. */
  onRetry?(): void;
}

export class SubgraphInstances {
  readonly name: string;
  readonly timeoutMs: number;
  readonly #circuitOpenMs: number;
  readonly #instances: Instance[];
  readonly #byUrl = new Map<string, Instance>();
  readonly #onRetry: (() => void) | undefined;
  #next = 0;

  constructor(options: SubgraphInstancesOptions) {
    this.name = options.name;
    this.timeoutMs = options.timeoutMs;
    this.#circuitOpenMs = options.circuitOpenMs;
    this.#onRetry = options.onRetry;
    this.#instances = options.urls.map((url, index, all) => {
      const instance: Instance = {
        url,
        label: all.length > 1 ? `${options.name}#${index + 1}` : options.name,
        breaker: circuitBreaker(handleAll, { halfOpenAfter: options.circuitOpenMs, breaker: new ConsecutiveBreaker(FAILURES_TO_OPEN) }),
        openedAt: 0,
      };
      instance.breaker.onBreak(() => (instance.openedAt = Date.now()));
      if (options.onCircuitChange) {
        const tell = options.onCircuitChange;
        tell(instance.label, 'closed');
        instance.breaker.onStateChange((state) => tell(instance.label, STATE_NAMES[state]));
      }
      this.#byUrl.set(url, instance);
      return instance;
    });
  }

  /** Each instance's circuit, by its label. */
  circuits(): Record<string, CircuitStateName> {
    return Object.fromEntries(this.#instances.map((instance) => [instance.label, STATE_NAMES[instance.breaker.state]]));
  }

  /**
   * One HTTP request to one instance (below batching, so that a failed batch counts once), through
   * its breaker. While an instance is probed (half-open) other requests are refused at once rather
   * than wait for the probe's answer, so that none waits longer than its own deadline.
   */
  guarded(post: JsonPost): JsonPost {
    return async (url, body, headers) => {
      // spread() sends to instances' URLs only.
      const instance = this.#byUrl.get(url)!;
      if (instance.breaker.state === CircuitState.HalfOpen) throw this.#circuitOpen(instance);
      try {
        return await instance.breaker.execute(() => post(url, body, headers));
      } catch (error) {
        if (error instanceof BrokenCircuitError) throw this.#circuitOpen(instance);
        if (error instanceof DeadlineExceeded)
          throw new SubgraphUnavailable(this.name, 'deadline', `The ${this.name} subgraph did not answer within ${error.timeoutMs} ms.`, RETRY_AFTER_SECONDS, { cause: error });
        throw new SubgraphUnavailable(this.name, 'connection', `The ${this.name} subgraph cannot be reached (${networkErrorType(error)}).`, RETRY_AFTER_SECONDS, { cause: error });
      }
    };
  }

  /**
   * A request to the subgraph: to its instances in turn. An instance whose circuit is open is passed
   * over (nothing was sent); a query that failed to connect is sent once more to another instance,
   * a mutation never (it may have been carried out).
   */
  spread(post: JsonPost): JsonPost {
    const instances = this.#instances;
    if (instances.length === 1) return (_url, body, headers) => post(instances[0]!.url, body, headers);
    return async (_url, body, headers) => {
      const first = this.#next++ % instances.length;
      let retried = false;
      let failure: SubgraphUnavailable | undefined;
      for (let tried = 0; tried < instances.length; tried += 1) {
        try {
          return await post(instances[(first + tried) % instances.length]!.url, body, headers);
        } catch (error) {
          if (!(error instanceof SubgraphUnavailable)) throw error;
          failure = failure?.reason === 'connection' ? failure : error;
          if (error.reason === 'circuit_open') continue;
          if (error.reason !== 'connection' || retried || !isQuery(body)) throw error;
          retried = true;
          this.#onRetry?.();
        }
      }
      throw failure!;
    };
  }

  #circuitOpen(instance: Instance): SubgraphUnavailable {
    const waited = Date.now() - instance.openedAt;
    const label = instance.label === this.name ? `The ${this.name} subgraph` : `Instance ${instance.label.split('#')[1]} of the ${this.name} subgraph`;
    return new SubgraphUnavailable(
      this.name,
      'circuit_open',
      `${label} failed ${FAILURES_TO_OPEN} requests in a row; it is not asked again until it is probed.`,
      Math.max(1, Math.ceil((this.#circuitOpenMs - waited) / 1000)),
    );
  }
}
