/**
 * A subscription as the gateway serves it (@apollo/gateway executes none): checked by the same rules
 * as a query (token, depth, alias and cost limits, validation), then turned into a query of the feed's
 * read field with the subscriber's selection (lib/graphql/live-feeds.ts), which runs through the gateway's own Apollo
 * Server and query planner, so that fields of other subgraphs resolve as in any query. The query is
 * run after the subscriber's cursor at once (the replay: what happened since `after`) and again each
 * time the service's notices wake the subscription (change-notices.ts); each item read is one event,
 * delivered in order, and its cursor is where the next read starts. Reads, not notices, decide what
 * is delivered, so nothing is missed or delivered twice across the switch from replay to live, a
 * lost notice or a reconnection.
 */
import type { ApolloServer } from '@apollo/server';
import { context as otelContext, type Tracer } from '@opentelemetry/api';
import type { DocumentNode, ExecutionResult, FieldNode, GraphQLError, GraphQLFormattedError, GraphQLSchema, OperationDefinitionNode, ValidationRule } from 'graphql';
import { Kind } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { GraphqlLimits } from '../../lib/config/runtime.js';
import { MAX_FEED_PAGE } from '../../lib/db/change-feed.js';
import type { LiveMetrics } from '../../lib/ops/metrics.js';
import { costRefusal, graphqlOf, operationCost, type CostAnnotations } from '../../lib/graphql/cost.js';
import { Bell, deliverySpan, nextMoment } from '../../lib/graphql/live-delivery.js';
import { LIVE_FEEDS, type LiveFeed, type Watch } from '../../lib/graphql/live-feeds.js';
import { problemOf } from '../../lib/problem.js';
import type { GatewayContext } from '../data-source.js';
import type { ChangeNotices } from './change-notices.js';

/** What a client sends: the GraphQL-over-HTTP request parameters, as graphql-ws and graphql-sse carry them. */
export interface SubscriptionRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** A subscription checked and planned: the feed, the notices that wake it, its cursor, and the read query. */
export interface PlannedSubscription {
  /** The subscription as sent, parsed and checked. */
  document: DocumentNode;
  feed: LiveFeed;
  /** The Subscription field's arguments, coerced. */
  args: Record<string, unknown>;
  watches: Watch[];
  after: string | null;
  /** Where the client finds each event in `data`: the subscription field's alias or name. */
  responseKey: string;
  /** Whether the client asked for `cursor` itself (else it is read, and left out of what is delivered). */
  asksCursor: boolean;
  /** The read query: the subscription's selection on the feed's read field, after `$liveCursor`. */
  readQuery: string;
  operationName: string | undefined;
  variables: Record<string, unknown>;
  /** Events one read asks for: as many as the cost limit allows (each costs what the subscription does), at most MAX_FEED_PAGE, the read fields' own maximum. */
  pageSize: number;
  /** What one event costs to deliver, by the schema's @cost and @listSize (lib/graphql/cost.ts). */
  eventCost: number;
}

/** What one read gives: an ExecutionResult per item, the cursor after the last, whether the page was full; or the errors of a failed read. */
type Read = { events: ExecutionResult[]; cursor: string | null; full: boolean } | { errors: readonly GraphQLFormattedError[]; unknownKey?: boolean };

/**
 * The codes of a read refused without a problem status (Apollo Server's and the gateway's own): the
 * request's fault, which asking again will not mend.
 */
const REFUSAL_CODES: ReadonlySet<unknown> = new Set([
  'BAD_REQUEST',
  'BAD_USER_INPUT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'OPERATION_RESOLUTION_FAILURE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'PERSISTED_QUERY_NOT_FOUND',
]);

/**
 * Whether a read that failed with these errors may succeed if asked again: a subgraph or database
 * away (5xx, SUBGRAPH_UNAVAILABLE, DATABASE_UNAVAILABLE), too many requests, or an error it cannot
 * tell; not when every error is a refusal (a 4xx problem, or a refusal's code), which would be
 * refused again forever.
 */
export function mayRecover(errors: readonly GraphQLFormattedError[]): boolean {
  const refusal = (error: GraphQLFormattedError) => {
    const status = problemOf(error as { extensions?: Record<string, unknown> })?.status;
    if (status !== undefined) return status >= 400 && status < 500 && status !== 408 && status !== 429;
    return REFUSAL_CODES.has(error.extensions?.code);
  };
  return errors.length === 0 || !errors.every(refusal);
}

/** The waits between reads that failed (a subgraph or its database away): the stream stays open and loses nothing. */
const RETRY_MS = [500, 1_000, 2_000, 5_000, 10_000] as const;
const CURSOR_VARIABLE = 'liveCursor';
/**
 * Subscription documents kept parsed and validated, by their text (as Apollo Server's document store
 * does for queries): at most this many, and this much text together (a syntax tree with its
 * locations takes some 50 to 100 bytes a character), so that many large documents cannot pin the
 * gateway's memory.
 */
const CHECKED_DOCUMENTS = { max: 500, maxSize: 256 * 1024 } as const;

/**
 * A subscription document parsed and validated once, shared by every subscription sent with the same
 * text (thousands of clients of one app send the same few): no copy of its syntax tree per subscriber.
 */
interface CheckedDocument {
  document: DocumentNode;
  /** The read queries planned of it, by operation name and page size. */
  readOperations: Map<string, ReturnType<typeof readOperation>>;
}

export interface LiveSubscriptionOptions {
  apollo: ApolloServer<GatewayContext>;
  /** The gateway's API schema, as @apollo/gateway built it from the supergraph. */
  schema: () => GraphQLSchema;
  notices: ChangeNotices;
  limits: GraphqlLimits;
  annotations: CostAnnotations;
  /** The validation rules of every operation at the gateway (graphql-armor's). */
  validationRules: readonly ValidationRule[];
  metrics: LiveMetrics;
  /** The gateway's formatError: a refusal reads as at /graphql. */
  formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  /** The gateway's tracer (undefined with tracing off): each delivery woken by traced appends is a span of their trace. */
  tracer?: Tracer | undefined;
}

export class LiveSubscriptions {
  readonly #options: LiveSubscriptionOptions;
  /** The documents checked against `#checkedFor`, the schema they were validated by (a supergraph update starts afresh). */
  readonly #checked = new LRUCache<string, CheckedDocument>({ ...CHECKED_DOCUMENTS, sizeCalculation: (_checked, query) => query.length });
  #checkedFor: GraphQLSchema | undefined;
  readonly #reads: SharedReads;

  constructor(options: LiveSubscriptionOptions) {
    this.#options = options;
    this.#reads = new SharedReads(options.apollo);
  }

  /** The schema subscriptions are checked against. */
  schema(): GraphQLSchema {
    return this.#options.schema();
  }

  #refusal(error: GraphQLError): GraphQLFormattedError {
    return this.#options.formatError(error.toJSON(), error);
  }

  /** Checks a subscription as the gateway checks a query, and plans its reads; the refusals otherwise. */
  plan(request: SubscriptionRequest): PlannedSubscription | GraphQLFormattedError[] {
    const schema = this.#options.schema();
    const gql = graphqlOf(schema);
    const { limits } = this.#options;
    const refuse = (message: string, code: string) => [this.#refusal(new gql.GraphQLError(message, { extensions: { code } }))];
    if (typeof request.query !== 'string' || request.query === '') return refuse('A subscription needs a `query` string.', 'BAD_REQUEST');
    if (request.variables != null && (typeof request.variables !== 'object' || Array.isArray(request.variables))) return refuse('`variables` must be an object.', 'BAD_REQUEST');
    if (request.operationName != null && typeof request.operationName !== 'string') return refuse('`operationName` must be a string.', 'BAD_REQUEST');
    const variables = (request.variables ?? {}) as Record<string, unknown>;
    const operationName = (request.operationName ?? undefined) as string | undefined;
    const checked = this.#check(schema, request.query);
    if (Array.isArray(checked)) return checked;
    const { document } = checked;
    const operation = gql.getOperationAST(document, operationName);
    if (!operation)
      return refuse(operationName ? `Unknown operation named "${operationName}".` : 'The document defines several operations; operationName must name one.', 'OPERATION_RESOLUTION_FAILURE');
    if (operation.operation !== 'subscription') {
      return refuse('Over graphql-ws and GraphQL over SSE the gateway serves subscriptions; send queries and mutations as HTTP requests to /graphql.', 'BAD_REQUEST');
    }
    const coerced = gql.getVariableValues(schema, operation.variableDefinitions ?? [], variables);
    if (coerced.errors) return coerced.errors.map((error) => this.#refusal(Object.assign(error, { extensions: { code: 'BAD_USER_INPUT' } })));
    const perEvent = operationCost({ schema, document, operation, variables }, this.#options.annotations);
    if (perEvent > limits.maxCost) return [this.#refusal(costRefusal(perEvent, limits.maxCost))];

    // Validation leaves one root field (SingleFieldSubscriptionsRule), a field of the schema.
    const field = operation.selectionSet.selections[0] as FieldNode;
    const feed = LIVE_FEEDS.find((candidate) => candidate.field === field.name.value);
    if (!feed) return refuse(`The gateway serves no subscription ${field.name.value}.`, 'SUBSCRIPTION_NOT_SUPPORTED');
    const definition = schema.getSubscriptionType()!.getFields()[feed.field]!;
    const args = gql.getArgumentValues(definition, field, coerced.coerced);
    const responseKey = field.alias?.value ?? field.name.value;
    const pageSize = Math.max(1, Math.min(MAX_FEED_PAGE, Math.floor(limits.maxCost / Math.max(1, perEvent))));
    const planKey = `${operationName ?? ''}\n${pageSize}`;
    let read = checked.readOperations.get(planKey);
    if (!read) checked.readOperations.set(planKey, (read = readOperation(gql, document, operation, field, feed, responseKey, pageSize)));
    const { readQuery, unusedVariable } = read;
    const readVariables = { ...variables };
    if (unusedVariable) delete readVariables[unusedVariable];
    return {
      document,
      feed,
      args,
      watches: feed.watches(args),
      after: (args.after as string | null | undefined) ?? null,
      responseKey,
      asksCursor: field.selectionSet?.selections.some((selection) => selection.kind === Kind.FIELD && (selection.alias ?? selection.name).value === 'cursor') ?? false,
      readQuery,
      operationName,
      variables: readVariables,
      pageSize,
      eventCost: perEvent,
    };
  }

  /** The document of `query` parsed and validated against `schema` (once per text), or its refusals (not kept). */
  #check(schema: GraphQLSchema, query: string): CheckedDocument | GraphQLFormattedError[] {
    if (this.#checkedFor !== schema) {
      this.#checked.clear();
      this.#checkedFor = schema;
    }
    const known = this.#checked.get(query);
    if (known) return known;
    const gql = graphqlOf(schema);
    let document: DocumentNode;
    try {
      document = gql.parse(query, { maxTokens: this.#options.limits.maxTokens });
    } catch (error) {
      return [this.#refusal(Object.assign(error as GraphQLError, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } }))];
    }
    const invalid = gql.validate(schema, document, [...gql.specifiedRules, ...this.#options.validationRules]);
    if (invalid.length) return invalid.map((error) => this.#refusal(Object.assign(error, { extensions: { ...error.extensions, code: 'GRAPHQL_VALIDATION_FAILED' } })));
    const checked = { document, readOperations: new Map() };
    this.#checked.set(query, checked);
    return checked;
  }

  /**
   * Whether the caller may follow this subscription: the one place where object-level rules (the
   * operators' and audiences' of issue 44) are checked before a subscription opens. Today reads are
   * public, so every caller may; each read runs with the caller's credentials besides, so that what a
   * subgraph refuses a query it refuses in the replay and live alike.
   */
  mayFollow(_planned: PlannedSubscription, _caller: GatewayContext): GraphQLFormattedError | undefined {
    return undefined;
  }

  /**
   * The events of a planned subscription: its first read at once (a refusal of it, e.g. an unknown
   * key, is the subscription's answer), then a stream that reads again whenever woken.
   */
  async open(planned: PlannedSubscription, context: GatewayContext, ended: () => void = () => {}): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
    const refused = this.mayFollow(planned, context);
    if (refused) {
      ended();
      return { errors: [refused] } as unknown as ExecutionResult;
    }
    const stream = new LiveStream(planned, context, this.#reads, this.#options, ended);
    const first = await stream.read(planned.after).catch((error: unknown) => {
      stream.close();
      throw error;
    });
    if ('errors' in first) {
      stream.close();
      const unknown = first.unknownKey && planned.feed.unknownKey?.(planned.args);
      return { errors: unknown ? [{ message: unknown.detail, extensions: { code: unknown.code } }] : first.errors } as ExecutionResult;
    }
    return stream.start(first);
  }
}

/**
 * The reads of the live feeds, shared. Subscribers with the same read query, variables and cursor and
 * the same credentials (the same Authorization, or none) would be given the same answer by every
 * subgraph, whose rules see nothing else of the caller: while one such read is in flight, a subscriber
 * takes its answer rather than run its own (the two subscribers of a passport woken by one append read
 * once; thousands of idle ones woken by a reconnected notice stream read once). Only a read begun after
 * the subscriber's last wake is taken: one begun before may have missed the append that rang.
 */
class SharedReads {
  readonly #apollo: ApolloServer<GatewayContext>;
  readonly #inFlight = new Map<string, { began: number; read: Promise<Read> }>();

  constructor(apollo: ApolloServer<GatewayContext>) {
    this.#apollo = apollo;
  }

  /** The page after `cursor`, from a read begun after the moment `since`. */
  read(planned: PlannedSubscription, cursor: string | null, context: GatewayContext, since: number): Promise<Read> {
    const key = JSON.stringify([context.authorization ?? null, cursor, planned.operationName ?? null, planned.variables, planned.readQuery]);
    const shared = this.#inFlight.get(key);
    if (shared && shared.began > since) return shared.read;
    const entry = { began: nextMoment(), read: this.#execute(planned, cursor, context) };
    this.#inFlight.set(key, entry);
    const settled = () => {
      if (this.#inFlight.get(key) === entry) this.#inFlight.delete(key);
    };
    entry.read.then(settled, settled);
    return entry.read;
  }

  async #execute(planned: PlannedSubscription, cursor: string | null, context: GatewayContext): Promise<Read> {
    const response = await this.#apollo.executeOperation(
      { query: planned.readQuery, variables: { ...planned.variables, [CURSOR_VARIABLE]: cursor }, ...(planned.operationName ? { operationName: planned.operationName } : {}) },
      // Not an answer the subgraph client shares from before: it would not know when this subscriber was woken.
      { contextValue: { ...context, freshAnswer: true } },
    );
    if (response.body.kind !== 'single') throw new Error('a read of a live feed was answered incrementally');
    const { data, errors } = response.body.singleResult;
    const items = ((data as Record<string, unknown> | null | undefined)?.[planned.responseKey] as { nodes: Record<string, unknown>[] } | null | undefined)?.nodes;
    if (!items) return errors?.length ? { errors } : { errors: [], unknownKey: true };
    let last = cursor;
    const events = items.map((item, index): ExecutionResult => {
      last = item.cursor as string;
      const event = planned.asksCursor ? item : withoutCursor(item);
      // An error of one event's field (its path: key, nodes, index, …) goes with that event.
      const own = errors?.filter((error) => error.path?.[0] === planned.responseKey && error.path[2] === index).map((error) => ({ ...error, path: [planned.responseKey, ...error.path!.slice(3)] }));
      return { data: { [planned.responseKey]: event }, ...(own?.length ? { errors: own as unknown as GraphQLError[] } : {}) };
    });
    return { events, cursor: last, full: items.length >= planned.pageSize };
  }
}

function withoutCursor(item: Record<string, unknown>): Record<string, unknown> {
  const { cursor: _cursor, ...rest } = item;
  return rest;
}

/**
 * The read query of a subscription: the same document with the operation a query whose one field is
 * the feed's read field (under the subscription's response key), with the subscription's arguments,
 * `after: $liveCursor`, `first: <page size>` and `cursor` added to the selection. A variable the
 * subscription used only for `after` is no longer used, and is left out.
 */
function readOperation(
  gql: ReturnType<typeof graphqlOf>,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  field: FieldNode,
  feed: LiveFeed,
  responseKey: string,
  pageSize: number,
): { readQuery: string; unusedVariable: string | undefined } {
  const afterValue = field.arguments?.find((argument) => argument.name.value === 'after')?.value;
  let unusedVariable: string | undefined;
  if (afterValue?.kind === Kind.VARIABLE) {
    let uses = 0;
    gql.visit(document, { VariableDefinition: () => false, Variable: (node) => void (node.name.value === afterValue.name.value && (uses += 1)) });
    if (uses === 1) unusedVariable = afterValue.name.value;
  }
  const name = (value: string) => ({ kind: Kind.NAME, value }) as const;
  const readField: FieldNode = {
    ...field,
    alias: name(responseKey),
    name: name(feed.readField),
    arguments: [
      ...(field.arguments ?? []).filter((argument) => argument.name.value !== 'after'),
      { kind: Kind.ARGUMENT, name: name('after'), value: { kind: Kind.VARIABLE, name: name(CURSOR_VARIABLE) } },
      { kind: Kind.ARGUMENT, name: name('first'), value: { kind: Kind.INT, value: String(pageSize) } },
    ],
    // The page's nodes are the events.
    selectionSet: {
      kind: Kind.SELECTION_SET,
      selections: [
        {
          kind: Kind.FIELD,
          name: name('nodes'),
          selectionSet: { kind: Kind.SELECTION_SET, selections: [...(field.selectionSet?.selections ?? []), { kind: Kind.FIELD, name: name('cursor') }] },
        },
      ],
    },
  };
  const readDefinition: OperationDefinitionNode = {
    ...operation,
    operation: gql.OperationTypeNode.QUERY,
    variableDefinitions: [
      ...(operation.variableDefinitions ?? []).filter((definition) => definition.variable.name.value !== unusedVariable),
      { kind: Kind.VARIABLE_DEFINITION, variable: { kind: Kind.VARIABLE, name: name(CURSOR_VARIABLE) }, type: { kind: Kind.NAMED_TYPE, name: name('String') } },
    ],
    selectionSet: { kind: Kind.SELECTION_SET, selections: [readField] },
  };
  // The other operations of the document are left out; its fragments stay.
  const definitions = document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION);
  return { readQuery: gql.print({ kind: Kind.DOCUMENT, definitions: [readDefinition, ...definitions] }), unusedVariable };
}

/**
 * One subscriber's events: those of the first read, then of each read after the last cursor, woken by
 * its bell; ended by `return`. A class rather than closures: thousands are open at once, each idle.
 */
class LiveStream implements AsyncIterableIterator<ExecutionResult> {
  readonly #planned: PlannedSubscription;
  readonly #context: GatewayContext;
  readonly #reads: SharedReads;
  readonly #metrics: LiveMetrics;
  readonly #tracer: Tracer | undefined;
  readonly #bell = new Bell();
  readonly #unwatches: (() => void)[];
  /** Gives back the subscription's places; cleared once called. */
  #ended: (() => void) | undefined;
  /** The moment a read must have begun after to serve this stream: its watches', then its last wake's. */
  #since: number;
  #events: AsyncGenerator<ExecutionResult> | undefined;

  constructor(planned: PlannedSubscription, context: GatewayContext, reads: SharedReads, options: Pick<LiveSubscriptionOptions, 'notices' | 'metrics' | 'tracer'>, ended: () => void) {
    this.#planned = planned;
    this.#context = context;
    this.#reads = reads;
    this.#metrics = options.metrics;
    this.#tracer = options.tracer;
    this.#ended = ended;
    // Watched before the first read: a notice that comes while it runs rings for the next.
    this.#unwatches = planned.watches.map(({ feed, key }) => options.notices.watch(planned.feed.service, feed, key, (at, traced) => this.#bell.ring(at, traced)));
    this.#since = nextMoment();
  }

  read(cursor: string | null): Promise<Read> {
    return this.#reads.read(this.#planned, cursor, this.#context, this.#since);
  }

  /** Counted open, the stream that delivers `first` and what comes after. */
  start(first: Extract<Read, { events: unknown }>): this {
    this.#metrics.subscriptionOpened(this.#planned.feed.field);
    this.#events = this.#run(first);
    return this;
  }

  /** Unwatches and gives back the subscription's places, once, from the generator's end or from a return before its first event (whose body, never started, has no finally to run). */
  close(): void {
    const ended = this.#ended;
    if (!ended) return;
    this.#ended = undefined;
    if (this.#events) this.#metrics.subscriptionClosed(this.#planned.feed.field);
    for (const unwatch of this.#unwatches) unwatch();
    ended();
  }

  async *#run(first: Extract<Read, { events: unknown }>): AsyncGenerator<ExecutionResult> {
    const field = this.#planned.feed.field;
    const bell = this.#bell;
    // The span of the delivery in progress, when appends of a trace woke it (deliverySpan).
    let delivery: ReturnType<typeof deliverySpan>;
    try {
      let page = first;
      // When the append that woke the read was made (none for the replay).
      let appendedAt: number | undefined;
      for (;;) {
        for (const event of page.events) {
          yield event;
          this.#metrics.eventDelivered(field, appendedAt === undefined ? undefined : (Date.now() - appendedAt) / 1000);
        }
        delivery?.span.end();
        delivery = undefined;
        if (!page.full) {
          const rung = await bell.wait();
          appendedAt = rung.appendedAt;
          this.#since = bell.rungAt;
          delivery = deliverySpan(this.#tracer, field, rung.traces);
        }
        let next: Read | undefined;
        for (let attempt = 0; !bell.closed; attempt += 1) {
          const cursor = page.cursor;
          next = await (delivery ? otelContext.with(delivery.context, () => this.read(cursor)) : this.read(cursor));
          if ('events' in next) break;
          // Refused (the subscriber may no longer read this): the subscription ends with the refusal.
          if (!mayRecover(next.errors)) {
            yield { errors: next.errors } as ExecutionResult;
            return;
          }
          // A subgraph or its database away: read again later, from the same cursor.
          await bell.sleep(RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!);
        }
        if (bell.closed || !next || !('events' in next)) return;
        page = next;
      }
    } finally {
      delivery?.span.end();
      this.close();
    }
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    return this.#events!.next();
  }

  return(value?: unknown): Promise<IteratorResult<ExecutionResult>> {
    // Rung closed first: a stream waiting for a notice would not see the return before its next event.
    this.#bell.close();
    this.close();
    return this.#events!.return(value as undefined);
  }

  throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.#bell.close();
    this.close();
    return this.#events!.throw(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
