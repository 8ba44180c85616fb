/**
 * The subscriptions a service's change notices wake, by feed and key: a notice wakes those of its key
 * and those that follow every key of its feed (ANY_KEY), not every subscription of the service; a
 * resync (notices may have been missed) wakes them all. The gateway's (gateway/live/change-notices.ts)
 * and a subgraph's own subscriptions (subgraph-subscriptions.ts) alike.
 */
import { ANY_KEY } from './live-feeds.js';

/**
 * Wakes a subscription; `at`: when the append that woke it was made (ms since the epoch), `trace`:
 * its traceparent (lib/db/change-feed.ts), both absent for a resync.
 */
export type Wake = (at?: number, trace?: string) => void;

export class FeedWatchers {
  /** feed → key → the subscriptions woken by it. */
  readonly #watchers = new Map<string, Map<string, Set<Wake>>>();
  #count = 0;

  /** How many watches are held. */
  get size(): number {
    return this.#count;
  }

  /** The feeds watched (or watched once). */
  feeds(): IterableIterator<string> {
    return this.#watchers.keys();
  }

  has(feed: string): boolean {
    return this.#watchers.has(feed);
  }

  /** Calls `wake` on each notice of `feed` about `key` (every key: ANY_KEY), and on every resync; returns the unwatch. */
  watch(feed: string, key: string, wake: Wake): () => void {
    let byKey = this.#watchers.get(feed);
    if (!byKey) this.#watchers.set(feed, (byKey = new Map()));
    let wakes = byKey.get(key);
    if (!wakes) byKey.set(key, (wakes = new Set()));
    wakes.add(wake);
    this.#count += 1;
    return () => {
      if (!wakes.delete(wake)) return;
      this.#count -= 1;
      if (wakes.size === 0 && byKey.get(key) === wakes) byKey.delete(key);
    };
  }

  /** Wakes the subscriptions a notice of `feed` about `key` concerns; how many. */
  notify(feed: string, key: string, at?: number, trace?: string): number {
    const byKey = this.#watchers.get(feed);
    if (!byKey) return 0;
    const woken = [...(byKey.get(key) ?? []), ...(byKey.get(ANY_KEY) ?? [])];
    for (const wake of woken) wake(at, trace);
    return woken.length;
  }

  wakeAll(): void {
    for (const byKey of this.#watchers.values()) for (const wakes of byKey.values()) for (const wake of wakes) wake();
  }
}
