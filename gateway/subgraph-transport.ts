/**
 * How the gateway's requests reach the subgraphs: JSON POSTs over node:http (lib/http/post-json.ts),
 * batched (subgraph-batching.ts), shared while identical ones are in flight, spread over a
 * subgraph's replicas with deadlines and circuit breakers (subgraph-instances.ts) and timed. Each
 * is a JsonPost wrapped around the next; gateway/apollo.ts stacks them.
 */
import { jsonPoster, type JsonAnswer } from '../lib/http/post-json.js';
import type { ServerMetrics } from '../lib/ops/metrics.js';
import { isQuery, type JsonPost } from './subgraph-batching.js';
import { networkErrorType, SubgraphUnavailable } from './subgraph-instances.js';

/** An answer with a refusal of the caller's credentials, role or operator in it (or text that looks like one). */
const MAY_CARRY_REFUSAL = /"code":"(MISSING_TOKEN|INVALID_TOKEN|INSUFFICIENT_ROLE|PLATFORM_ADMIN_REQUIRED|UNKNOWN_OPERATOR|OWNED_BY_ANOTHER_OPERATOR)"/;

/**
 * The gateway's HTTP client to the subgraphs: a JSON POST over node:http with kept-alive sockets
 * (lib/http/post-json.ts) rather than the default make-fetch-happen (whose agent builds a stack trace
 * on every request) or Node's fetch (WHATWG Request, Headers and body streams built and torn down on
 * every call).
 *
 * Identical subgraph queries in flight at the same moment are sent once. Under load many clients
 * ask the same thing at once (a popular passport, the same cross-service page); their query plans
 * send the same fetches, which the subgraph would answer alike. Requests are shared by URL,
 * credentials and body, and only queries: a mutation is always sent once per request. The entry is
 * dropped as soon as the answer arrives, so nothing is cached beyond one round trip and every request
 * sees an answer begun after it was sent. An answer that refuses the caller is not shared: each
 * refusal is logged by the subgraph that makes it. A caller that needs an answer begun after it asked
 * (`cache-control: no-cache`, a live feed's read woken by an append) is not given one in flight. Each caller parses the shared text itself (parsedAnswer):
 * the gateway merges subgraph data into the result it builds, so one parsed object must not serve
 * two requests.
 */
export function sharingPost(post: JsonPost = jsonPoster()): JsonPost {
  const inFlight = new Map<string, { answer: Promise<JsonAnswer>; callers: number }>();
  return (url, body, headers = {}) => {
    // Anything but a query (a mutation), or a query whose answer must be begun after it (no-cache: a live read), is sent as it is.
    if (!isQuery(body) || headers['cache-control'] === 'no-cache') return post(url, body, headers);
    const key = `${url}\n${headers.authorization ?? ''}\n${body}`;
    const shared = inFlight.get(key);
    if (shared) {
      shared.callers += 1;
      // A refusal is each caller's own: the subgraph logs every refused admin request (lib/audit/refusal-log.ts), so a caller whose shared answer may carry one asks again by itself.
      return shared.answer.then((answer) => (MAY_CARRY_REFUSAL.test(answer.text) ? post(url, body, headers) : answer));
    }
    const entry = { callers: 1, answer: undefined as unknown as Promise<JsonAnswer> };
    entry.answer = post(url, body, headers).then(
      (answer) => {
        inFlight.delete(key);
        // Shared: its text is made before any caller can take (and change) a batch's parsed value.
        if (entry.callers > 1) void answer.text;
        return answer;
      },
      (error: unknown) => {
        inFlight.delete(key);
        throw error;
      },
    );
    inFlight.set(key, entry);
    return entry.answer;
  };
}

/** Times each request to one subgraph, and counts those that fail (by network error code, deadline, open circuit or HTTP status). */
export function timedSubgraphPost(metrics: ServerMetrics, subgraph: string, post: JsonPost): JsonPost {
  return async (url, body, headers) => {
    const started = performance.now();
    try {
      const answer = await post(url, body, headers);
      const ok = answer.status >= 200 && answer.status <= 299;
      metrics.subgraphFetchDone(subgraph, ok ? 'success' : 'error', (performance.now() - started) / 1000, ok ? undefined : String(answer.status));
      return answer;
    } catch (error) {
      metrics.subgraphFetchDone(subgraph, 'error', (performance.now() - started) / 1000, error instanceof SubgraphUnavailable ? error.errorType : networkErrorType(error));
      throw error;
    }
  };
}
