/**
 * What each gateway's query planner makes of the mixed workload's queries: fetches per plan, and the
 * subgraph requests they cost. Ours plans with @apollo/query-planner (the very copy @apollo/gateway
 * runs, loaded from its dependencies) and sends the fetches of one subgraph that start together as one
 * batched request (gateway/subgraph-batching.ts); Hive Gateway with HIVE_ROUTER_RUNTIME plans with
 * @graphql-hive/router-query-planner (bench/tools), whose BatchFetch already asks for several entity
 * paths of one subgraph in one operation, and sends each fetch as a request of its own.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse } from 'graphql';
import { BENCH_TOOLS } from './support.js';

interface ApolloNode {
  kind: string;
  serviceName?: string;
  nodes?: ApolloNode[];
  node?: ApolloNode;
}

export interface PlanCount {
  /** Fetch nodes of the plan. */
  fetches: number;
  /** Subgraph requests once fetches of one subgraph that start at the same step go as one batch (ours), or one per fetch (Hive). */
  requests: number;
  /** Steps one after another: the round trips a request waits for. */
  steps: number;
}

/**
 * Fetches scheduled as they run: each starts when what precedes it in its Sequence has answered,
 * every branch of a Parallel at once. `start` is the step a node begins at; returns the step after it.
 */
function schedule(node: ApolloNode | undefined, start: number, starts: { step: number; service: string }[]): number {
  if (!node) return start;
  switch (node.kind) {
    case 'Fetch':
    case 'BatchFetch':
      starts.push({ step: start, service: node.serviceName! });
      return start + 1;
    case 'Sequence':
      return (node.nodes ?? []).reduce((step, child) => schedule(child, step, starts), start);
    case 'Parallel':
      return Math.max(start, ...(node.nodes ?? []).map((child) => schedule(child, start, starts)));
    default:
      // Flatten, Condition, Defer: the node inside.
      return schedule(node.node ?? (node.nodes ? { kind: 'Parallel', nodes: node.nodes } : undefined), start, starts);
  }
}

function count(root: ApolloNode | undefined, batched: boolean): PlanCount {
  const starts: { step: number; service: string }[] = [];
  const steps = schedule(root, 0, starts);
  const requests = batched ? new Set(starts.map(({ step, service }) => `${step}\n${service}`)).size : starts.length;
  return { fetches: starts.length, requests, steps };
}

/** Fetches and subgraph requests of each query, by our planner and by Hive's Rust planner, over `supergraphSdl`. */
export async function planCounts(supergraphSdl: string, queries: Record<string, string>): Promise<Record<string, { ours: PlanCount; hiveRust: PlanCount }>> {
  const fromGateway = createRequire(createRequire(import.meta.url).resolve('@apollo/gateway'));
  const internals = fromGateway('@apollo/federation-internals') as {
    Supergraph: { build(sdl: string): { schema: unknown } };
    operationFromDocument(schema: unknown, document: unknown): unknown;
  };
  const { QueryPlanner } = fromGateway('@apollo/query-planner') as { QueryPlanner: new (supergraph: unknown) => { buildQueryPlan(operation: unknown): { node?: ApolloNode } } };
  const supergraph = internals.Supergraph.build(supergraphSdl);
  const ours = new QueryPlanner(supergraph);
  const rustModule = createRequire(join(BENCH_TOOLS, 'package.json')).resolve('@graphql-hive/router-query-planner');
  const { QueryPlanner: RustPlanner } = (await import(rustModule)) as {
    QueryPlanner: new (sdl: string) => { plan(query: string, operationName: string | null, labels: Set<string>, percentage: number): { node?: ApolloNode } };
  };
  const rust = new RustPlanner(supergraphSdl);
  return Object.fromEntries(
    Object.entries(queries).map(([kind, query]) => [
      kind,
      {
        ours: count(ours.buildQueryPlan(internals.operationFromDocument(supergraph.schema, parse(query))).node, true),
        hiveRust: count(rust.plan(query, null, new Set(), 0).node, false),
      },
    ]),
  );
}
