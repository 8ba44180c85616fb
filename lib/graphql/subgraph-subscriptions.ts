/**
 * Subscriptions served by the subgraph that owns them, for gateways that forward a subscription to
 * its subgraph and resolve each event's fields of other subgraphs themselves (Hive Gateway, Cosmo
 * Router, Apollo Router: GraphQL over SSE to subgraphs). Our gateway does not come here: it reads the
 * same feeds with the subscriber's whole selection (gateway/live/). Both follow a feed the same way:
 * its read query after a cursor (lib/graphql/live-feeds.ts), woken by the service's change notices
 * (lib/db/change-feed.ts), so the replay and the live events are the same rows in the same order.
 *
 * GraphQL over Server-Sent Events in distinct connections mode (graphql-sse) on the subgraph's GraphQL
 * path: a GET or POST with `Accept: text/event-stream` and a subscription. It is checked as the
 * subgraph checks a query (the caller's token, depth, aliases, cost); queries and mutations are not
 * taken this way (the subgraph's plain HTTP path keeps their admin log, metrics and gateway credential).
 */
import { context as otelContext, type Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DocumentNode, GraphQLError, GraphQLFieldResolver, GraphQLFormattedError, GraphQLSchema, ValidationRule } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fastify';
import type { ServiceName } from '../config/services.js';
import { type ChangeListener, MAX_FEED_PAGE } from '../db/change-feed.js';
import type { Authenticator } from '../auth/tokens.js';
import type { GraphqlLimits } from '../config/runtime.js';
import { PROBLEM_MEDIA_TYPE } from '../http/request-problem.js';
import type { LiveMetrics } from '../ops/metrics.js';
import { type Problem, ProblemError, problemHeaders } from '../problem.js';
import type { RequestContext } from './context.js';
import { type CostAnnotations, costRefusal, graphqlOf, operationCost } from './cost.js';
import { GATEWAY_CREDENTIAL_HEADER, gatewayCredentialCheck } from './gateway-credential.js';
import { HeldCredentials } from './held-credentials.js';
import { Bell, deliverySpan } from './live-delivery.js';
import { clientQuota, quotaRefusalResponse, EventStreams } from './live-gate.js';
import { FeedWatchers, type Wake } from './feed-watchers.js';
import { LIVE_FEEDS, type LiveFeed } from './live-feeds.js';

/** A page of a feed as its read field answers it; null when its arguments name nothing. */
type FeedPage = { nodes: { cursor: string }[] } | null;

/** What a subgraph's subscriptions are observed by: the live metrics of its server (connections, subscriptions, events, lag) and its tracer, for the span of each delivery. */
export interface FeedObservers {
  metrics: LiveMetrics;
  tracer: Tracer | undefined;
}

/**
 * Gives each Subscription field of this service's feeds what graphql-js runs a subscription with:
 * `subscribe`, the feed's events after the subscriber's cursor, then each new one; `resolve`, the
 * event itself, on which the subscriber's selection runs. A read is the feed's read field's own
 * resolver, so it answers exactly what that query answers.
 */
export function followFeedsInSchema(schema: GraphQLSchema, service: ServiceName, changes: ChangeListener, observers: FeedObservers): void {
  const gql = graphqlOf(schema);
  const subscriptionFields = schema.getSubscriptionType()?.getFields() ?? {};
  const queryFields = schema.getQueryType()!.getFields();
  // One listener of the service's notices for all its subscriptions, each woken by the notices of its keys only.
  const watchers = new FeedWatchers();
  let listening = false;
  const watch: WatchFeed = (watched, key, wake) => {
    if (!listening) {
      listening = true;
      changes.subscribe({ onNotice: ({ feed, key, at, trace }) => void watchers.notify(feed, key, at, trace), onResync: () => watchers.wakeAll() });
    }
    return watchers.watch(watched, key, wake);
  };
  for (const feed of LIVE_FEEDS.filter((candidate) => candidate.service === service)) {
    const field = subscriptionFields[feed.field];
    const read = queryFields[feed.readField]?.resolve;
    if (!field || !read) throw new Error(`the ${service} schema lacks Subscription.${feed.field} or Query.${feed.readField}`);
    field.resolve = (event: unknown) => event;
    field.subscribe = (async (root, args: Record<string, unknown>, context, info) => {
      const readAfter = async (after: string | null) => (await read(root, { ...args, after, first: MAX_FEED_PAGE }, context, info)) as FeedPage;
      // Watched from the first read on: a notice while it runs rings for the next.
      const bell = new Bell();
      const unwatch = watchFeed(watch, feed, args, bell);
      const first = await readAfter((args.after as string | null | undefined) ?? null).catch((error: unknown) => {
        unwatch();
        throw error;
      });
      if (!first) {
        unwatch();
        const unknown = feed.unknownKey?.(args);
        throw new gql.GraphQLError(unknown?.detail ?? 'The subscription names nothing to follow.', { extensions: { code: unknown?.code ?? 'NOT_FOUND' } });
      }
      return new FeedFollower(feed.field, first, readAfter, bell, unwatch, observers);
    }) as GraphQLFieldResolver<unknown, unknown>;
  }
}

type WatchFeed = (feed: string, key: string, wake: Wake) => () => void;

/** Rings `bell` on each notice of the feed that concerns a subscription with these arguments, and whenever notices may have been missed; the unwatch. */
function watchFeed(watch: WatchFeed, feed: LiveFeed, args: Record<string, unknown>, bell: Bell): () => void {
  const unwatches = feed.watches(args).map(({ feed: watched, key }) => watch(watched, key, (at, trace) => bell.ring(at, trace)));
  return () => {
    for (const unwatch of unwatches) unwatch();
  };
}

/**
 * The events of the first page, then of each read after the last cursor, read again whenever rung
 * while the last page was not full; ended by `return` (the subscriber gone), at once even while it
 * waits. Counted in the server's live metrics as the gateway's are, and each read woken by traced
 * appends a `deliver <field>` span in the first append's trace (live-delivery.ts).
 */
class FeedFollower implements AsyncIterableIterator<unknown> {
  readonly #field: string;
  readonly #readAfter: (after: string | null) => Promise<FeedPage>;
  readonly #bell: Bell;
  readonly #observers: FeedObservers;
  #unwatch: (() => void) | undefined;
  #page: { cursor: string }[];
  #full: boolean;
  #cursor: string | null;
  /** When the earliest append the page in delivery was read for was made; none for the replay. */
  #appendedAt: number | undefined;
  #delivery: ReturnType<typeof deliverySpan>;

  constructor(field: string, first: NonNullable<FeedPage>, readAfter: (after: string | null) => Promise<FeedPage>, bell: Bell, unwatch: () => void, observers: FeedObservers) {
    this.#field = field;
    this.#readAfter = readAfter;
    this.#bell = bell;
    this.#unwatch = unwatch;
    this.#observers = observers;
    this.#page = first.nodes;
    this.#full = this.#page.length >= MAX_FEED_PAGE;
    this.#cursor = this.#page.at(-1)?.cursor ?? null;
    observers.metrics.subscriptionOpened(field);
  }

  async next(): Promise<IteratorResult<unknown>> {
    const bell = this.#bell;
    while (!bell.closed) {
      const event = this.#page.shift();
      if (event) {
        this.#observers.metrics.eventDelivered(this.#field, this.#appendedAt === undefined ? undefined : (Date.now() - this.#appendedAt) / 1000);
        return { value: event, done: false };
      }
      this.#delivery?.span.end();
      this.#delivery = undefined;
      if (!this.#full) {
        const rung = await bell.wait();
        if (bell.closed) break;
        this.#appendedAt = rung.appendedAt;
        this.#delivery = deliverySpan(this.#observers.tracer, this.#field, rung.traces);
      }
      const cursor = this.#cursor;
      const delivery = this.#delivery;
      const read = await (delivery ? otelContext.with(delivery.context, () => this.#readAfter(cursor)) : this.#readAfter(cursor)).catch((error: unknown) => {
        this.#end();
        throw error;
      });
      this.#page = read?.nodes ?? [];
      this.#full = this.#page.length >= MAX_FEED_PAGE;
      this.#cursor = this.#page.at(-1)?.cursor ?? cursor;
    }
    return this.#end();
  }

  async return(): Promise<IteratorResult<unknown>> {
    return this.#end();
  }

  #end(): IteratorResult<unknown> {
    this.#bell.close();
    const unwatch = this.#unwatch;
    if (unwatch) {
      this.#unwatch = undefined;
      unwatch();
      this.#delivery?.span.end();
      this.#delivery = undefined;
      this.#observers.metrics.subscriptionClosed(this.#field);
    }
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

export interface SubgraphSubscriptionOptions {
  schema: GraphQLSchema;
  /** The caller's context, as for a query: throws the problem of a token that cannot be told. */
  context: (request: FastifyRequest) => Promise<RequestContext>;
  /** Recognises the bearer token a stream opens with, and asks it again while the stream is open. */
  authenticator: Authenticator;
  /** Calls a listener after each revocation or suspension made in this process (the identity store's onRevocation). */
  onRevocation?: (listener: () => void) => void;
  /** The live metrics of the subgraph's server: its streams are counted as connections (`graphql-sse`). */
  metrics: LiveMetrics;
  validationRules: readonly ValidationRule[];
  annotations: CostAnnotations;
  /** The subgraph's limits (subgraphLimits): a subscription's cost, and the client's quota (GRAPHQL_MAX_SUBSCRIPTIONS_PER_CLIENT, the cost of its subscriptions' events together). */
  limits: Pick<GraphqlLimits, 'maxCost' | 'maxTokens' | 'maxSubscriptionsPerClient'>;
  /** With it, a stream that carries the gateway's credential was counted by that gateway's own quota, and is not counted again here. */
  gatewaySecret?: string;
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** graphql-sse's answer that is no stream: a problem (RFC 9457) with its headers. */
const problemResponse = (refusal: Problem, headers: Record<string, string>) =>
  [JSON.stringify(refusal), { status: refusal.status, statusText: refusal.title, headers: { 'content-type': PROBLEM_MEDIA_TYPE, ...headers } }] as const;

/** Whether a request asks for GraphQL over SSE (graphql-sse compares the header whole): at the gateway's /graphql and a subgraph's port alike. */
export const asksForEventStream = (request: FastifyRequest): boolean => request.headers.accept === 'text/event-stream';

/**
 * The handler of a subgraph's GraphQL over SSE requests (asksForEventStream), held to the rules of
 * the gateway's: the token checked as the stream opens (connectionRefusal) and asked again while it
 * is open (HeldCredentials), the client's quota of open subscriptions (ClientQuota, by address, as
 * the gateway counts; not for a stream the gateway's credential says a gateway counted). On shutdown
 * its streams end with a reconnect hint (`retry:`): the gateway subscribes again, to another replica
 * or to this one restarted, and its subscribers resume from their cursors.
 */
export function subgraphSubscriptions(app: FastifyInstance, options: SubgraphSubscriptionOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const eventStreams = new EventStreams(options.authenticator, options.metrics);
  const held = new HeldCredentials(options.authenticator);
  options.onRevocation?.(() => void held.check());
  const quota = clientQuota(options.limits);
  const fromGateway = options.gatewaySecret === undefined ? undefined : gatewayCredentialCheck(options.gatewaySecret);
  app.addHook('preClose', (done) => {
    eventStreams.endAll();
    held.close();
    done();
  });
  /** A subscription refused before it starts: 400 with its errors, as a GraphQL response. */
  const refusal = (errors: readonly GraphQLError[]) =>
    [JSON.stringify({ errors: errors.map((error) => options.formatError(error.toJSON(), error)) }), { status: 400, statusText: 'Bad Request', headers: { 'content-type': JSON_TYPE } }] as const;
  const gql = graphqlOf(options.schema);
  const handler = createHandler({
    schema: options.schema,
    // Distinct connections only: each subscription is its own request.
    authenticate: () => null,
    async onSubscribe(request, params) {
      const fastifyRequest = request.raw as unknown as FastifyRequest;
      let contextValue: RequestContext;
      try {
        contextValue = await options.context(fastifyRequest);
      } catch (error) {
        // The token told when the stream opened, and cannot be now (the identity store away since).
        if (!(error instanceof ProblemError)) throw error;
        return problemResponse(error.problem, problemHeaders(error.problem));
      }
      let document: DocumentNode;
      try {
        document = typeof params.query === 'string' ? gql.parse(params.query, { maxTokens: options.limits.maxTokens }) : params.query;
      } catch (error) {
        return refusal([Object.assign(error as GraphQLError, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })]);
      }
      const invalid = gql.validate(options.schema, document, [...gql.specifiedRules, ...options.validationRules]);
      if (invalid.length) return refusal(invalid.map((error) => Object.assign(error, { extensions: { ...error.extensions, code: 'GRAPHQL_VALIDATION_FAILED' } })));
      const operation = gql.getOperationAST(document, params.operationName);
      if (operation?.operation !== 'subscription') {
        return refusal([new gql.GraphQLError('Over GraphQL over SSE this subgraph serves subscriptions; send queries and mutations as plain HTTP requests.', { extensions: { code: 'BAD_REQUEST' } })]);
      }
      const variables = params.variables ?? {};
      const cost = operationCost({ schema: options.schema, document, operation, variables }, options.annotations);
      if (cost > options.limits.maxCost) return refusal([costRefusal(cost, options.limits.maxCost)]);
      // A stream a gateway sent (its credential) was counted in that gateway's quota.
      const release = fromGateway?.(fastifyRequest.headers[GATEWAY_CREDENTIAL_HEADER]) ? undefined : quota.admit(fastifyRequest, cost, 429);
      if (release !== undefined && typeof release !== 'function') return quotaRefusalResponse(release);
      // Run here, by the graphql the schema was built with (graphql-sse may load another copy of it).
      const result = await gql.subscribe({ schema: options.schema, document, operationName: params.operationName, variableValues: variables, contextValue }).catch((error: unknown) => {
        release?.();
        throw error;
      });
      if (Symbol.asyncIterator in result) return held.streamHeld(result, fastifyRequest.headers.authorization, release);
      release?.();
      // A subscription refused as it starts (an unknown passport) is one result, which graphql-sse knows by its `data`.
      return { data: null, ...result };
    },
  });
  // Who asks first, as at the gateway: a bad token is refused before its subscription is read.
  return (request, reply) => eventStreams.serve(request, reply, handler);
}
