/**
 * A service's change notices wake the subscriptions of their feed and key only (lib/graphql/feed-watchers.ts,
 * the gateway's and a subgraph's own subscriptions alike), counted: a notice about one passport among
 * a thousand followed wakes its own followers and those of the whole feed, not the thousand; a resync
 * wakes every one; an unwatched subscription is woken no more.
 */
import { describe, expect, it } from 'vitest';
import { FeedWatchers } from '../../lib/graphql/feed-watchers.js';
import { ANY_KEY } from '../../lib/graphql/live-feeds.js';

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('the subscriptions a change notice wakes', () => {
  it('are those of its key and of its whole feed, not every subscription of the service', () => {
    const watchers = new FeedWatchers();
    let wakes = 0;
    const count = () => void (wakes += 1);
    const unwatches = Array.from({ length: 1_000 }, (_, index) => watchers.watch('passport-events', `p-${index}`, count));
    const woken: unknown[][] = [];
    watchers.watch('passport-events', 'p-7', (...args) => void woken.push(args));
    watchers.watch('passport-status', ANY_KEY, count);
    expect(watchers.size).toBe(1_002);

    expect(watchers.notify('passport-events', 'p-7', 1_796_568_437_452, TRACE)).toBe(2);
    expect([wakes, woken]).toEqual([1, [[1_796_568_437_452, TRACE]]]);
    expect(watchers.notify('passport-status', 'default')).toBe(1);
    expect(watchers.notify('passport-snapshots', 'p-7')).toBe(0);
    expect(wakes).toBe(2);

    watchers.wakeAll();
    expect([wakes, woken.length]).toEqual([2 + 1_001, 2]);

    unwatches[7]!();
    unwatches[7]!();
    expect(watchers.size).toBe(1_001);
    expect(watchers.notify('passport-events', 'p-7')).toBe(1);
  });
});
