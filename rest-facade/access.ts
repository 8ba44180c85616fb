/**
 * Who may call a route: every route with a role refuses in `onRequest`, before its query, content
 * type or body is read, so that an anonymous or under-privileged caller learns nothing about the
 * operation (DESIGN: authentication before parsing); each refusal is reported to the service's
 * admin log (refusal-reports.ts).
 */
import { type FieldNode, Kind, type OperationDefinitionNode, parse } from 'graphql';
import type { RefusalsOfAKind } from '../lib/audit/refusal-log.js';
import { refusalReportKey, signRefusalReport } from '../lib/audit/refusal-report.js';
import { challengeOf, identify, refusalOf, rolesOf, type AccessTokens, type Authenticator, type Caller, type Refusal } from '../lib/auth/tokens.js';
import type { ServiceName } from '../lib/config/services.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import { serverLogger } from '../lib/ops/logging.js';
import { problem } from '../lib/problem.js';
import type { GatewayCall } from './gateway-calls.js';
import { RefusalReports } from './refusal-reports.js';
import type { Route } from './route-table.js';

export interface Denied {
  caller: Caller;
  refusal: Refusal;
}

/** Who is refused a route, and why, if anyone is. */
export async function credentialRefusal(route: Route, authorization: string | undefined, authenticator: Authenticator): Promise<Denied | undefined> {
  if (!route.role) return undefined;
  const caller = await identify(authenticator, authorization);
  const refusal = refusalOf(caller, [route.role]);
  return refusal ? { caller, refusal } : undefined;
}

export function refusalProblem(refusal: Refusal): RequestProblem {
  const challenge = challengeOf(refusal);
  return new RequestProblem(problem(refusal.status, refusal.code, refusal.detail), challenge ? { 'www-authenticate': challenge } : {});
}

/** The field of the graph a route's operation runs (below the service's root field for queries), as the admin log names actions. */
export function actionOf(operation: string, service: ServiceName): string {
  const definition = parse(operation).definitions.find((node): node is OperationDefinitionNode => node.kind === Kind.OPERATION_DEFINITION)!;
  const field = definition.selectionSet.selections[0] as FieldNode;
  return field.name.value === service ? (field.selectionSet!.selections[0] as FieldNode).name.value : field.name.value;
}

export interface RefusalReporter {
  report(service: ServiceName, action: string, denied: Denied): void;
  /** Sends what is gathered (for one service, or all): before a read of its admin log, and when the facade stops. */
  flush(service?: ServiceName): Promise<void>;
}

/** The mutation that reports a service's refusals to it. */
export const refusalReportOperation = (service: ServiceName) => `mutation ReportRefusals($report: String!, $signature: String!) { ${service}ReportRefusals(report: $report, signature: $signature) }`;

/**
 * A write or admin operation refused here never reaches its service, which keeps every refused
 * write and admin request in its admin log: the refusals are gathered and reported to it, signed,
 * a few times a second (refusal-reports.ts). A platform without a key to sign them with (neither
 * SUBGRAPH_SECRET nor configured tokens: AccessTokens.platformKey) does not report them.
 */
export function refusalReporter(tokens: AccessTokens, callGateway: GatewayCall): RefusalReporter {
  const reportKey = refusalReportKey(tokens);
  const reports = new RefusalReports(async (service: ServiceName, refusals: RefusalsOfAKind[]) => {
    try {
      await callGateway(refusalReportOperation(service), { ...signRefusalReport(reportKey!, refusals) }, undefined);
    } catch (error) {
      const count = refusals.reduce((sum, kind) => sum + kind.count, 0);
      serverLogger('facade').error({ err: error instanceof RequestProblem ? error.details : error }, `the ${service} service did not take a report of ${count} refusals; it is sent again shortly`);
      throw error;
    }
  });
  return {
    report(service, action, { caller, refusal }) {
      if (!reportKey) return;
      const { principal } = caller;
      reports.add(service, {
        actor: principal?.name ?? 'anonymous',
        role: rolesOf(principal),
        operator: principal?.operator ?? null,
        action,
        outcome: refusal.code,
        status: refusal.status,
        detail: refusal.detail,
      });
    },
    flush: (service) => reports.flush(service),
  };
}
