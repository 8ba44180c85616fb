/**
 * The gateway's side of the services' change notices: one stream per service (`GET /changes` of
 * the service's subgraph, lib/graphql/change-stream.ts), opened when the first subscription needs it,
 * whatever the number of subscribers; a notice wakes the subscriptions of its key. Whenever the
 * stream (re)opens, every subscription of the service is woken, since notices may have been missed
 * meanwhile: what was appended is read from the service after each subscriber's cursor, so a missed
 * notice delays nothing beyond the reconnection.
 */
import { EventSource } from 'eventsource';
import type { ServiceName } from '../../lib/config/services.js';
import { TRACEPARENT } from '../../lib/db/change-feed.js';
import { GATEWAY_CREDENTIAL_HEADER } from '../../lib/graphql/gateway-credential.js';
import { CHANGES_PATH } from '../../lib/graphql/change-stream.js';
import { ANY_KEY } from '../../lib/graphql/live-feeds.js';

/**
 * Wakes a subscription; `at`: when the append that woke it was made (ms since the epoch), `trace`:
 * its traceparent (lib/db/change-feed.ts), both absent for a resync.
 */
type Wake = (at?: number, trace?: string) => void;

/** How long after a refused or failed stream the gateway opens it again. */
const REOPEN_MS = 1_000;

class ServiceNotices {
  readonly #url: string;
  readonly #secret: string | undefined;
  /** feed → key → the subscriptions woken by it. */
  readonly #watchers = new Map<string, Map<string, Set<Wake>>>();
  #source: EventSource | undefined;
  #reopen: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(subgraphUrl: string, secret: string | undefined) {
    this.#url = new URL(CHANGES_PATH, subgraphUrl).href;
    this.#secret = secret;
  }

  watch(feed: string, key: string, wake: Wake): () => void {
    let byKey = this.#watchers.get(feed);
    if (!byKey) {
      this.#watchers.set(feed, (byKey = new Map()));
      if (this.#source) this.#listen(this.#source, feed);
    }
    let wakes = byKey.get(key);
    if (!wakes) byKey.set(key, (wakes = new Set()));
    wakes.add(wake);
    if (!this.#source && !this.#reopen) this.#open();
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0) byKey.delete(key);
    };
  }

  #open(): void {
    this.#reopen = undefined;
    if (this.#closed) return;
    const secret = this.#secret;
    const source = new EventSource(this.#url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...(secret ? { [GATEWAY_CREDENTIAL_HEADER]: secret } : {}) } }),
    });
    this.#source = source;
    source.addEventListener('resync', () => this.#wakeAll());
    for (const feed of this.#watchers.keys()) this.#listen(source, feed);
    source.addEventListener('error', () => {
      // A stream refused or answered otherwise is not retried by EventSource itself.
      if (source.readyState !== EventSource.CLOSED || this.#closed) return;
      this.#source = undefined;
      this.#reopen = setTimeout(() => this.#open(), REOPEN_MS);
    });
  }

  #listen(source: EventSource, feed: string): void {
    source.addEventListener(feed, (event) => {
      const [key, , at, trace] = event.data.split(' ');
      const byKey = this.#watchers.get(feed);
      const traced = trace && TRACEPARENT.test(trace) ? trace : undefined;
      for (const wake of [...(byKey?.get(key ?? '') ?? []), ...(byKey?.get(ANY_KEY) ?? [])]) wake(Number(at) || undefined, traced);
    });
  }

  #wakeAll(): void {
    for (const byKey of this.#watchers.values()) for (const wakes of byKey.values()) for (const wake of wakes) wake();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#reopen);
    this.#source?.close();
  }
}

/** The change notices of every service the gateway serves subscriptions of. */
export class ChangeNotices {
  readonly #services = new Map<ServiceName, ServiceNotices>();

  constructor(subgraphUrls: ReadonlyMap<ServiceName, string>, secret: string | undefined) {
    for (const [service, url] of subgraphUrls) this.#services.set(service, new ServiceNotices(url, secret));
  }

  /** Calls `wake` on each notice of `feed` about `key`, and whenever notices may have been missed; returns the unwatch. */
  watch(service: ServiceName, feed: string, key: string, wake: Wake): () => void {
    const notices = this.#services.get(service);
    if (!notices) throw new Error(`no change notices of the ${service} service`);
    return notices.watch(feed, key, wake);
  }

  close(): void {
    for (const notices of this.#services.values()) notices.close();
  }
}
