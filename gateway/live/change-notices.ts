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
import { FeedWatchers, type Wake } from '../../lib/graphql/feed-watchers.js';

/** How long after a refused or failed stream the gateway opens it again. */
const REOPEN_MS = 1_000;

class ServiceNotices {
  readonly #url: string;
  readonly #secret: string | undefined;
  readonly #watchers = new FeedWatchers();
  #source: EventSource | undefined;
  #reopen: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(subgraphUrl: string, secret: string | undefined) {
    this.#url = new URL(CHANGES_PATH, subgraphUrl).href;
    this.#secret = secret;
  }

  watch(feed: string, key: string, wake: Wake): () => void {
    if (!this.#watchers.has(feed) && this.#source) this.#listen(this.#source, feed);
    const unwatch = this.#watchers.watch(feed, key, wake);
    if (!this.#source && !this.#reopen) this.#open();
    return unwatch;
  }

  #open(): void {
    this.#reopen = undefined;
    if (this.#closed) return;
    const secret = this.#secret;
    const source = new EventSource(this.#url, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, ...(secret ? { [GATEWAY_CREDENTIAL_HEADER]: secret } : {}) } }),
    });
    this.#source = source;
    source.addEventListener('resync', () => this.#watchers.wakeAll());
    for (const feed of this.#watchers.feeds()) this.#listen(source, feed);
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
      this.#watchers.notify(feed, key ?? '', Number(at) || undefined, trace && TRACEPARENT.test(trace) ? trace : undefined);
    });
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
