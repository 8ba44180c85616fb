/**
 * Concurrent queries to one subgraph go out as one batched HTTP request (a JSON array of
 * operations, which Apollo Server answers with an array in the same order when
 * `allowBatchedHttpRequests` is on; lib/graphql/subgraph-server.ts). A query plan fetches once per
 * alias or list path: 30 aliased `passport(id:)` fields make 30 fetches of the type records, 30 of
 * the snapshots and 60 of key standings. Batched, each subgraph gets one request per step of the
 * plan, and since the operations of a batch share one request context, its per-request
 * DataLoaders answer all of them with one SQL statement per kind of thing.
 *
 * Only queries are batched, and only with others to the same URL with the same headers (the
 * caller's credentials; the request id aside): a mutation goes out alone, as it must be logged and run by itself. A
 * batch whose answer is not 200 with one result per operation (a subgraph refusing one
 * operation's variables answers 400 for the whole batch) is sent again one operation at a time,
 * so each caller gets the status and body its own operation earns.
 *
 * Fetches of different client requests with the same credentials that start in the same turn of
 * the event loop share a batch too; each waits for the whole batch's answer, so under load a slow
 * operation can hold back the others of its batch by as much as it is slower.
 */
import type { JsonAnswer } from '../lib/http/post-json.js';

export type JsonPost = (url: string, body: string, headers?: Record<string, string>) => Promise<JsonAnswer>;

/** Most operations in one batched request; more are sent as further batches. */
export const MAX_OPERATIONS_PER_BATCH = 100;

/**
 * How long fetches to a subgraph that is still answering an earlier batch are gathered before they
 * go out, in milliseconds. Alone, a fetch goes out in the turn it was started; under load, the
 * fetches of other client requests that start within this time join its batch, and the subgraph
 * answers them with one request context and one SQL statement per kind of thing rather than one each.
 */
export const GATHER_WHILE_BUSY_MS = 1;

interface Waiting {
  body: string;
  resolve(answer: JsonAnswer): void;
  reject(error: unknown): void;
}

export function batchingPost(post: JsonPost): JsonPost {
  const pending = new Map<string, { url: string; headers: Record<string, string>; waiting: Waiting[] }>();
  /** Batches sent to each subgraph URL and not answered yet. */
  const unanswered = new Map<string, number>();

  async function send(url: string, headers: Record<string, string>, waiting: Waiting[]): Promise<void> {
    unanswered.set(url, (unanswered.get(url) ?? 0) + 1);
    try {
      await sendNow(url, headers, waiting);
    } finally {
      const left = unanswered.get(url)! - 1;
      if (left) unanswered.set(url, left);
      else unanswered.delete(url);
    }
  }

  async function sendNow(url: string, headers: Record<string, string>, waiting: Waiting[]): Promise<void> {
    if (waiting.length === 1) {
      const [only] = waiting as [Waiting];
      return post(url, only.body, headers).then(only.resolve, only.reject);
    }
    let answer: JsonAnswer;
    try {
      answer = await post(url, `[${waiting.map((item) => item.body).join(',')}]`, headers);
    } catch (error) {
      for (const item of waiting) item.reject(error);
      return;
    }
    const results = answer.status === 200 ? parsedArray(answer.text) : undefined;
    if (results?.length !== waiting.length) {
      await Promise.all(waiting.map((item) => post(url, item.body, headers).then(item.resolve, item.reject)));
      return;
    }
    for (const [index, item] of waiting.entries()) item.resolve(new BatchedAnswer(answer, results[index]));
  }

  return (url, body, headers = {}) => {
    if (!isQuery(body)) return post(url, body, headers);
    // The request id keeps no fetches apart: a batch carries the id of the fetch that began it.
    const { 'x-request-id': _requestId, ...kept } = headers;
    const key = `${url}\n${JSON.stringify(kept)}`;
    return new Promise<JsonAnswer>((resolve, reject) => {
      let batch = pending.get(key);
      if (!batch) {
        batch = { url, headers, waiting: [] };
        pending.set(key, batch);
        const flush = () => {
          pending.delete(key);
          const { waiting } = batch!;
          for (let start = 0; start < waiting.length; start += MAX_OPERATIONS_PER_BATCH) void send(url, headers, waiting.slice(start, start + MAX_OPERATIONS_PER_BATCH));
        };
        // Every fetch of one step of a query plan is started before the event loop turns; while the
        // subgraph is busy with an earlier batch, fetches of other requests are gathered a little longer.
        if (unanswered.has(url)) setTimeout(flush, GATHER_WHILE_BUSY_MS);
        else setImmediate(flush);
      }
      batch.waiting.push({ body, resolve, reject });
    });
  };
}

/**
 * One operation's answer out of a batched one, already parsed with the rest of the batch. Its text is
 * made only when asked for (a shared answer, an error's body), so that the usual caller parses the
 * operation's answer once rather than the batch's, then the operation's again from a copy.
 */
class BatchedAnswer implements JsonAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly headers: JsonAnswer['headers'];
  #value: unknown;
  #text: string | undefined;
  #taken = false;

  constructor(batch: JsonAnswer, value: unknown) {
    this.status = batch.status;
    this.statusText = batch.statusText;
    this.headers = batch.headers;
    this.#value = value;
  }

  get text(): string {
    this.#text ??= JSON.stringify(this.#value);
    return this.#text;
  }

  /** The parsed value, to the first caller only: the gateway merges what it is given into its result. */
  take(): { value: unknown } | undefined {
    if (this.#taken) return undefined;
    this.#taken = true;
    return { value: this.#value };
  }
}

/**
 * The parsed JSON body of an answer: a batched operation's value as the batch's parse left it, taken
 * once; any other (or a second caller of a shared one, whose text was made before) parsed from its text.
 */
export function parsedAnswer(answer: JsonAnswer): unknown {
  const taken = answer instanceof BatchedAnswer ? answer.take() : undefined;
  return taken ? taken.value : JSON.parse(answer.text);
}

/** The body is the JSON of {query, …} with the query as the planner prints it: `query …` or `{ … }`. */
export const isQuery = (body: string) => /^\{"query":"\s*(query\b|\{)/.test(body);

function parsedArray(text: string): unknown[] | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
