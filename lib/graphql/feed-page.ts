/**
 * The read fields of the feeds the gateway serves subscriptions from (`…After(after:, first:)`,
 * lib/graphql/live-feeds.ts): one page size bound, one cursor rule and one page shape for every service.
 */
import { feedCursorId, MAX_FEED_PAGE } from '../db/change-feed.js';
import { badRequest } from '../problem.js';
import { PageInfo } from './common-types.js';

/** The description of a read field's `first`. */
export const FEED_PAGE_SIZE = `Page size, 1 to ${MAX_FEED_PAGE}.`;

/** Refuses a page size outside 1 to MAX_FEED_PAGE (400 INVALID_QUERY). */
export function checkFeedPageSize(first: number): void {
  if (first < 1 || first > MAX_FEED_PAGE) throw badRequest('INVALID_QUERY', `first must be from 1 to ${MAX_FEED_PAGE}.`);
}

/** The id after a cursor of a feed with a cursor table (none: from the first), the page size checked; `what` names an item in the refusal. */
export function readWindow(after: string | null, first: number, what: string): bigint {
  checkFeedPageSize(first);
  const afterId = after === null ? 0n : feedCursorId(after);
  if (afterId === undefined) throw badRequest('INVALID_CURSOR', `after must be the cursor of a ${what}, as the feed carries it.`);
  return afterId;
}

/** A page of a feed: a full one may have more after it, and its last cursor is where a reader goes on. */
export const feedPageInfo = (nodes: readonly { cursor: string }[], first: number): PageInfo => PageInfo.of(nodes.length === first ? nodes.at(-1)!.cursor : null);
