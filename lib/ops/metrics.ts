/**
 * The platform's Prometheus metrics (prom-client), one exposition per process. Every series carries a
 * `server` label naming the server it is about (facade, gateway, trust, registry, issuer, archive),
 * so that `npm start`'s one endpoint and a process deployed apart read alike. Names follow
 * OpenTelemetry's HTTP, GraphQL and database conventions mapped to Prometheus (seconds, `_total`);
 * labels are bounded sets: route templates, known methods, operation names up to a cap.
 * docs/OPERATIONS.md lists every metric.
 */
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SERVER_NAMES, type ServerName } from '../config/services.js';
import { HistogramFamily, type HistogramSeries } from './histograms.js';

/** OpenTelemetry's duration buckets for HTTP servers, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Database statements are mostly sub-millisecond: finer buckets at the bottom. */
const QUERY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Buckets of an operation's cost, in the units of GRAPHQL_MAX_COST (about 10 µs of CPU each; 200,000 by default). */
const COST_BUCKETS = [10, 100, 1_000, 10_000, 50_000, 100_000, 200_000, 400_000];

/** How often Node's event-loop delay is sampled for nodejs_eventloop_lag_*, in milliseconds. */
const EVENT_LOOP_SAMPLE_MS = 100;

/** Methods kept as they are; any other is `_OTHER`, as OpenTelemetry's HTTP conventions say. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);
/** SQL verbs kept as db_operation_name; any other statement is `_OTHER`. */
const KNOWN_STATEMENTS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'BEGIN', 'COMMIT', 'ROLLBACK', 'WITH', 'SET', 'SAVEPOINT', 'RELEASE', 'DEALLOCATE']);
/**
 * Distinct GraphQL operation names kept per server; later new names are counted as `_OTHER`, so
 * that clients choosing names freely cannot grow the series without bound.
 */
export const OPERATION_NAME_LIMIT = 100;

/** What a service counts when a domain outcome is known (its service or resolver layer). */
export interface DomainMetrics {
  /** Passports created, one or a batch's. */
  passportsCreated(count: number): void;
  eventAppended(eventType: string): void;
  packMinted(): void;
  verdictGiven(outcome: string): void;
  /** A delegation credential accepted (code `ACCEPTED`) or refused with its problem code. */
  delegationJudged(outcome: 'accepted' | 'refused', code: string): void;
  revocationRecorded(): void;
  snapshotTaken(): void;
  keyStandingAnswered(standing: string): void;
  /** The platform's keys could not be placed in the trust graph (at start or after a rotation). */
  keyPlacementFailed(stage: 'start' | 'rotation'): void;
}

/** What the gateway counts of its subscriptions (gateway/live/), by protocol (`graphql-ws`, `graphql-sse`) and subscription field. */
export interface LiveMetrics {
  connectionOpened(protocol: string): void;
  connectionClosed(protocol: string): void;
  subscriptionOpened(field: string): void;
  subscriptionClosed(field: string): void;
  /** An event delivered; `lagSeconds`: from its append's notice to its delivery, for an event delivered live (not replayed). */
  eventDelivered(field: string, lagSeconds: number | undefined): void;
}

/** Metrics of one server, its `server` label fixed once so the hot path allocates no label object for it. */
export interface ServerMetrics {
  /** False with METRICS=off: every call below does nothing, and callers add no hook or plugin for it. */
  readonly enabled: boolean;
  readonly domain: DomainMetrics;
  httpRequestDone(route: string, method: string, status: number, seconds: number): void;
  graphqlOperationDone(operationName: string | null | undefined, operationType: string, outcome: 'success' | 'error', seconds: number): void;
  subgraphFetchDone(subgraph: string, outcome: 'success' | 'error', seconds: number, errorType?: string): void;
  /** A subgraph instance's circuit breaker is now in `state` (gateway/subgraph-instances.ts). */
  subgraphCircuitChanged(subgraph: string, instance: string, state: CircuitStateName): void;
  /** A query to a subgraph that failed to connect was sent again to another instance. */
  subgraphFetchRetried(subgraph: string): void;
  /** The gateway looked for a changed supergraph: switched to it, found none, or kept the old one (gateway/supergraph-updates.ts). */
  supergraphChecked(outcome: SupergraphCheckOutcome): void;
  databaseQueryDone(sql: string, seconds: number, failed: boolean): void;
  /** The outcome of a readiness probe: which of its checks failed (feeds passport_ready and passport_readiness_check_unmet). */
  readinessProbed(checks: readonly string[], unmet: Readonly<Record<string, string>>): void;
  /** Reports a pg pool's connections in use, idle and waiting at every scrape, until the function returned is called. */
  watchPool(pool: pg.Pool): () => void;
  /** A request refused 429 for its client's rate limit (lib/server/rate-limits.ts), by the client's role. */
  rateLimited(role: string): void;
  /** An operation the gateway ran: its cost as estimated before it ran and as it ran (lib/graphql/cost.ts). */
  graphqlOperationCost(operationType: string, estimated: number, actual: number): void;
  readonly live: LiveMetrics;
}

export type CircuitStateName = 'closed' | 'open' | 'half-open';
const CIRCUIT_STATES: readonly CircuitStateName[] = ['closed', 'open', 'half-open'];
export const SUPERGRAPH_CHECK_OUTCOMES = ['updated', 'unchanged', 'composition_failed', 'fetch_failed'] as const;
export type SupergraphCheckOutcome = (typeof SUPERGRAPH_CHECK_OUTCOMES)[number];

const nothing = () => {};
/** A server's metrics with METRICS=off: nothing is observed, nothing is kept. */
export const NO_SERVER_METRICS: ServerMetrics = Object.freeze({
  enabled: false,
  domain: Object.freeze({
    passportsCreated: nothing,
    eventAppended: nothing,
    packMinted: nothing,
    verdictGiven: nothing,
    delegationJudged: nothing,
    revocationRecorded: nothing,
    snapshotTaken: nothing,
    keyStandingAnswered: nothing,
    keyPlacementFailed: nothing,
  }),
  httpRequestDone: nothing,
  graphqlOperationDone: nothing,
  subgraphFetchDone: nothing,
  subgraphCircuitChanged: nothing,
  subgraphFetchRetried: nothing,
  supergraphChecked: nothing,
  databaseQueryDone: nothing,
  readinessProbed: nothing,
  watchPool: () => nothing,
  rateLimited: nothing,
  graphqlOperationCost: nothing,
  live: Object.freeze({ connectionOpened: nothing, connectionClosed: nothing, subscriptionOpened: nothing, subscriptionClosed: nothing, eventDelivered: nothing }),
});

/** The longest of KNOWN_STATEMENTS: a statement's first word is read no further. */
const LONGEST_VERB = Math.max(...[...KNOWN_STATEMENTS].map((verb) => verb.length));

/**
 * A statement's first word, upper-cased, if it is one of KNOWN_STATEMENTS. Read a character at a time
 * rather than by a regular expression: half the CPU (40 against 85 ns a statement, docs/OPS-COST.md).
 */
export function statementVerb(sql: string): string {
  let start = 0;
  while (start < sql.length && sql.charCodeAt(start) <= 32) start += 1;
  let end = start;
  while (end < sql.length && end - start <= LONGEST_VERB) {
    // A letter of either case: lower-cased by its 0x20 bit.
    const code = sql.charCodeAt(end) | 0x20;
    if (code < 0x61 || code > 0x7a) break;
    end += 1;
  }
  const word = sql.slice(start, end);
  if (KNOWN_STATEMENTS.has(word)) return word;
  const upper = word.toUpperCase();
  return KNOWN_STATEMENTS.has(upper) ? upper : '_OTHER';
}

/**
 * The request histogram families, kept by our own accumulators (lib/ops/histograms.ts) rather than
 * prom-client's Histogram: an observation then adds to numbers, with no string or object made. Each
 * server's series are a shard of the family, written together (docs/OPS-COST.md).
 */
function requestHistograms() {
  return {
    httpDuration: new HistogramFamily(
      'http_server_request_duration_seconds',
      'Duration of HTTP server requests, by route template, method and status (OpenTelemetry http.server.request.duration).',
      ['server', 'http_route', 'http_request_method', 'http_response_status_code'],
      DURATION_BUCKETS,
    ),
    graphqlDuration: new HistogramFamily(
      'graphql_server_operation_duration_seconds',
      `Duration of GraphQL operations, by operation name (the first ${OPERATION_NAME_LIMIT} distinct names, then _OTHER), type and outcome.`,
      ['server', 'graphql_operation_name', 'graphql_operation_type', 'outcome'],
      DURATION_BUCKETS,
    ),
    subgraphFetchDuration: new HistogramFamily(
      'graphql_gateway_subgraph_fetch_duration_seconds',
      "Duration of the gateway's requests to a subgraph, by subgraph and outcome.",
      ['server', 'subgraph', 'outcome'],
      DURATION_BUCKETS,
    ),
    queryDuration: new HistogramFamily(
      'db_client_operation_duration_seconds',
      'Duration of SQL statements sent to PostgreSQL, by statement verb and outcome (OpenTelemetry db.client.operation.duration).',
      ['server', 'db_system_name', 'db_operation_name', 'outcome'],
      QUERY_BUCKETS,
    ),
    operationCost: new HistogramFamily(
      'graphql_gateway_operation_cost',
      "Cost of the GraphQL operations the gateway ran (@cost/@listSize, GRAPHQL_MAX_COST's units), estimated before it ran and actual (the lists as answered), by operation type.",
      ['server', 'graphql_operation_type', 'cost_kind'],
      COST_BUCKETS,
    ),
  };
}

export class PlatformMetrics {
  /** Every metric but the request histograms (the default metrics among them); its content type is the exposition's. */
  readonly registry = new Registry();
  /** The request histograms (see requestHistograms), a shard of each family a server, in SERVER_NAMES' order. */
  readonly #histograms = requestHistograms();
  readonly #shards = new Map(
    SERVER_NAMES.map((server) => {
      const { httpDuration, graphqlDuration, subgraphFetchDuration, queryDuration, operationCost } = this.#histograms;
      return [
        server,
        {
          httpDuration: httpDuration.shard(),
          graphqlDuration: graphqlDuration.shard(),
          subgraphFetchDuration: subgraphFetchDuration.shard(),
          queryDuration: queryDuration.shard(),
          operationCost: operationCost.shard(),
        },
      ];
    }),
  );
  readonly #pools: { server: ServerName; pool: pg.Pool }[] = [];
  readonly #operationNames = new Map<ServerName, Set<string>>();

  readonly subgraphFetchErrors = new Counter({
    name: 'graphql_gateway_subgraph_fetch_errors_total',
    help: "The gateway's requests to a subgraph that failed, by subgraph and error type (a network error code or an HTTP status).",
    labelNames: ['server', 'subgraph', 'error_type'] as const,
    registers: [this.registry],
  });
  readonly subgraphCircuits = new Gauge({
    name: 'graphql_gateway_subgraph_circuit_state',
    help: "Whether a subgraph instance's circuit breaker is in the state (1) or not (0): closed (requests sent), open (refused until probed), half-open (one request probing).",
    labelNames: ['server', 'subgraph', 'instance', 'state'] as const,
    registers: [this.registry],
  });
  readonly subgraphRetries = this.#counter('graphql_gateway_subgraph_fetch_retries_total', 'Queries to a subgraph that failed to connect and were sent again to another instance, by subgraph.', [
    'subgraph',
  ]);
  readonly supergraphChecks = this.#counter(
    'graphql_gateway_supergraph_checks_total',
    "The gateway's looks for a changed supergraph, by outcome: updated (switched to it), unchanged, composition_failed or fetch_failed (the old one kept).",
    ['outcome'],
  );
  readonly poolConnections = new Gauge({
    name: 'db_client_connections_usage',
    help: 'Connections of the PostgreSQL pools, by state used or idle (OpenTelemetry db.client.connections.usage; its newer name db.client.connection.count would end in _count, which Prometheus keeps for histograms).',
    labelNames: ['server', 'db_client_connection_state'] as const,
    registers: [this.registry],
    collect: () => this.#collectPools(),
  });
  readonly poolWaiting = new Gauge({
    name: 'db_client_connection_pending_requests',
    help: 'Requests waiting for a connection of the PostgreSQL pools (OpenTelemetry db.client.connection.pending_requests).',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  readonly ready = new Gauge({
    name: 'passport_ready',
    help: 'Whether the server answered its last readiness probe ready (1) or not (0); updated at every probe.',
    labelNames: ['server'] as const,
    registers: [this.registry],
  });
  readonly readinessUnmet = new Gauge({
    name: 'passport_readiness_check_unmet',
    help: 'Whether a readiness check failed (1) or was met (0) at the last probe, by check (database, keys, a subgraph, gateway, shutdown).',
    labelNames: ['server', 'check'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = this.#counter('passport_rate_limited_requests_total', "Requests refused 429 for their client's rate limit (RATE_LIMITS), by the client's role.", ['role']);
  readonly passportsCreated = this.#counter('passport_passports_created_total', 'Passports created.');
  readonly eventsAppended = this.#counter('passport_events_appended_total', "Events appended to passports' logs, by event type.", ['event_type']);
  readonly packsMinted = this.#counter('passport_packs_minted_total', 'Tier-A packs minted.');
  readonly liveConnections = new Gauge({
    name: 'graphql_subscription_connections',
    help: 'Connections open for subscriptions at the gateway, by protocol (graphql-ws, graphql-sse).',
    labelNames: ['server', 'protocol'] as const,
    registers: [this.registry],
  });
  readonly liveSubscriptions = new Gauge({
    name: 'graphql_subscriptions',
    help: 'Subscriptions open at the gateway, by subscription field.',
    labelNames: ['server', 'subscription'] as const,
    registers: [this.registry],
  });
  readonly liveEvents = this.#counter('graphql_subscription_events_total', 'Events delivered to subscribers, by subscription field (replayed and live).', ['subscription']);
  readonly liveLag = new Histogram({
    name: 'graphql_subscription_delivery_lag_seconds',
    help: "From an append's change notice (taken in its transaction) to the delivery of its event to a subscriber, by subscription field; live events only.",
    labelNames: ['server', 'subscription'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly verdicts = this.#counter('passport_verdicts_total', 'Verdicts computed, by outcome.', ['outcome']);
  readonly delegations = this.#counter('passport_delegations_total', 'Delegation credentials judged, by outcome (accepted or refused) and code.', ['outcome', 'code']);
  readonly revocations = this.#counter('passport_revocations_total', 'Revocations recorded.');
  readonly snapshots = this.#counter('passport_snapshots_total', 'Archive snapshots taken.');
  readonly keyStandings = this.#counter('passport_key_standing_answers_total', 'Key standing answers, by standing.', ['standing']);
  readonly keyPlacementFailures = this.#counter('passport_key_placement_failures_total', "Failures to place the platform's keys in the trust graph, by stage (start or rotation).", ['stage']);

  /**
   * Whether metrics are kept (METRICS, on by default). Off, no default metrics are collected (no
   * event-loop or GC observers), forServer hands out NO_SERVER_METRICS, and no listener is served.
   */
  readonly enabled: boolean;

  constructor(options: { enabled?: boolean } = {}) {
    this.enabled = options.enabled ?? true;
    if (!this.enabled) return;
    // The event-loop delay is sampled every 100 ms rather than prom-client's 10 ms: each sample wakes
    // the process, and 100 wake-ups a second cost about 6 ms of CPU a second on a virtual machine
    // whether or not requests come (docs/OPS-COST.md); a scrape still sees hundreds of samples.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    // Gauges named _total, which Prometheus keeps for counters (promtool refuses them); each is the sum of its family without the suffix.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
  }

  #counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
    return new Counter({ name, help, labelNames: ['server', ...labelNames] as const, registers: [this.registry] });
  }

  #collectPools(): void {
    this.poolConnections.reset();
    this.poolWaiting.reset();
    for (const { server, pool } of this.#pools) {
      this.poolConnections.inc({ server, db_client_connection_state: 'used' }, pool.totalCount - pool.idleCount);
      this.poolConnections.inc({ server, db_client_connection_state: 'idle' }, pool.idleCount);
      this.poolWaiting.inc({ server }, pool.waitingCount);
    }
  }

  /** A known operation name, or `_OTHER` once the server has seen OPERATION_NAME_LIMIT distinct ones. */
  #boundedOperationName(server: ServerName, name: string | null | undefined): string {
    if (!name) return '';
    let seen = this.#operationNames.get(server);
    if (!seen) this.#operationNames.set(server, (seen = new Set()));
    if (seen.has(name)) return name;
    if (seen.size >= OPERATION_NAME_LIMIT) return '_OTHER';
    seen.add(name);
    return name;
  }

  /** The exposition in Prometheus' text format, as one string (the request histograms, then what registry.metrics() answers). */
  async exposition(): Promise<string> {
    return (await this.expositionParts()).join('');
  }

  /**
   * The exposition in parts, a metric family each (a request histogram family in parts of about 32 KiB),
   * which joined are the exposition, all collected before any is written (so that a failure to collect
   * one can still be answered as a failure): a listener writes them one after another rather than first
   * joining them into one string. A string of 128 KiB or more is a V8 large object, and making one (the
   * exposition of npm start after the mixed workload is 254 KiB) cost about 1 ms of CPU each on the
   * shared machine (docs/OPS-COST.md).
   */
  async expositionParts(): Promise<string[]> {
    const parts: string[] = [];
    // The request histograms first, each family in parts of at most some 32 KiB.
    for (const family of Object.values(this.#histograms)) parts.push(...family.parts(), '\n\n');
    const families = this.registry.getMetricsAsArray();
    for (const [index, metric] of families.entries()) {
      // The separator apart: prefixed, it would make a second string of the family's size.
      if (index > 0) parts.push('\n\n');
      parts.push(await this.registry.getSingleMetricAsString(metric.name));
    }
    parts.push('\n');
    return parts;
  }

  forServer(server: ServerName): ServerMetrics {
    if (!this.enabled) return NO_SERVER_METRICS;
    const metrics = this;
    // Every outcome from the start, so that the first poll adds no series (and a rate reads from zero).
    if (server === 'gateway') for (const outcome of SUPERGRAPH_CHECK_OUTCOMES) this.supergraphChecks.inc({ server, outcome }, 0);
    const { httpDuration, graphqlDuration, subgraphFetchDuration, queryDuration, operationCost } = this.#shards.get(server)!;
    // Each series is found by its labels' values in nested maps, made at its first observation.
    type Series = HistogramSeries;
    const httpSeries = new Map<string, Map<string, Map<number, Series>>>();
    const operationSeries = new Map<string, Map<string, Record<'success' | 'error', Series>>>();
    const fetchSeries = new Map<string, Record<'success' | 'error', Series>>();
    const statementSeries = new Map<string, Record<'success' | 'error', Series>>();
    const costSeries = new Map<string, { estimated: Series; actual: Series }>();
    const byOutcome = (series: (labelValues: readonly string[]) => Series, labelValues: readonly string[]) => ({
      success: series([...labelValues, 'success']),
      error: series([...labelValues, 'error']),
    });
    const domain: DomainMetrics = {
      passportsCreated: (count) => this.passportsCreated.inc({ server }, count),
      eventAppended: (eventType) => this.eventsAppended.inc({ server, event_type: eventType }),
      packMinted: () => this.packsMinted.inc({ server }),
      verdictGiven: (outcome) => this.verdicts.inc({ server, outcome }),
      delegationJudged: (outcome, code) => this.delegations.inc({ server, outcome, code }),
      revocationRecorded: () => this.revocations.inc({ server }),
      snapshotTaken: () => this.snapshots.inc({ server }),
      keyStandingAnswered: (standing) => this.keyStandings.inc({ server, standing }),
      keyPlacementFailed: (stage) => this.keyPlacementFailures.inc({ server, stage }),
    };
    return {
      enabled: true,
      domain,
      httpRequestDone(route, method, status, seconds) {
        const knownMethod = KNOWN_METHODS.has(method) ? method : '_OTHER';
        let byMethod = httpSeries.get(route);
        if (!byMethod) httpSeries.set(route, (byMethod = new Map()));
        let byStatus = byMethod.get(knownMethod);
        if (!byStatus) byMethod.set(knownMethod, (byStatus = new Map()));
        let series = byStatus.get(status);
        if (!series) byStatus.set(status, (series = httpDuration([server, route, knownMethod, status])));
        series.observe(seconds);
      },
      graphqlOperationDone(operationName, operationType, outcome, seconds) {
        const name = metrics.#boundedOperationName(server, operationName);
        let byType = operationSeries.get(name);
        if (!byType) operationSeries.set(name, (byType = new Map()));
        let series = byType.get(operationType);
        if (!series) byType.set(operationType, (series = byOutcome(graphqlDuration, [server, name, operationType])));
        series[outcome].observe(seconds);
      },
      subgraphFetchDone(subgraph, outcome, seconds, errorType) {
        let series = fetchSeries.get(subgraph);
        if (!series) fetchSeries.set(subgraph, (series = byOutcome(subgraphFetchDuration, [server, subgraph])));
        series[outcome].observe(seconds);
        if (outcome === 'error') metrics.subgraphFetchErrors.inc({ server, subgraph, error_type: errorType ?? 'unknown' });
      },
      subgraphCircuitChanged(subgraph, instance, state) {
        for (const each of CIRCUIT_STATES) metrics.subgraphCircuits.set({ server, subgraph, instance, state: each }, each === state ? 1 : 0);
      },
      subgraphFetchRetried: (subgraph) => metrics.subgraphRetries.inc({ server, subgraph }),
      supergraphChecked: (outcome) => metrics.supergraphChecks.inc({ server, outcome }),
      databaseQueryDone(sql, seconds, failed) {
        const verb = statementVerb(sql);
        let series = statementSeries.get(verb);
        if (!series) statementSeries.set(verb, (series = byOutcome(queryDuration, [server, 'postgresql', verb])));
        series[failed ? 'error' : 'success'].observe(seconds);
      },
      readinessProbed(checks, unmet) {
        metrics.ready.set({ server }, Object.keys(unmet).length === 0 ? 1 : 0);
        for (const check of new Set([...checks, ...Object.keys(unmet)])) metrics.readinessUnmet.set({ server, check }, check in unmet ? 1 : 0);
      },
      watchPool(pool) {
        const watched = { server, pool };
        metrics.#pools.push(watched);
        return () => void metrics.#pools.splice(metrics.#pools.indexOf(watched), 1);
      },
      rateLimited: (role) => this.rateLimited.inc({ server, role }),
      graphqlOperationCost(operationType, estimated, actual) {
        let series = costSeries.get(operationType);
        if (!series) costSeries.set(operationType, (series = { estimated: operationCost([server, operationType, 'estimated']), actual: operationCost([server, operationType, 'actual']) }));
        series.estimated.observe(estimated);
        series.actual.observe(actual);
      },
      live: {
        connectionOpened: (protocol) => metrics.liveConnections.inc({ server, protocol }),
        connectionClosed: (protocol) => metrics.liveConnections.dec({ server, protocol }),
        subscriptionOpened: (subscription) => metrics.liveSubscriptions.inc({ server, subscription }),
        subscriptionClosed: (subscription) => metrics.liveSubscriptions.dec({ server, subscription }),
        eventDelivered(subscription, lagSeconds) {
          metrics.liveEvents.inc({ server, subscription });
          if (lagSeconds !== undefined) metrics.liveLag.observe({ server, subscription }, lagSeconds);
        },
      },
    };
  }
}
