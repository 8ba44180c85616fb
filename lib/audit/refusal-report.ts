/**
 * The REST facade's report of the refusals it made for a service (rest-facade/refusal-reports.ts):
 * a JSON text of the refusals of each kind, signed with HMAC-SHA-256 under a key every server of the
 * platform derives from SUBGRAPH_SECRET or the access tokens it accepts (AccessTokens.platformKey). The report is sent as a mutation through the
 * gateway like any other; the service believes it (its counts included) only with a valid signature,
 * so that no one else can write refusals into its admin log, or claim a flood that was not.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AccessTokens } from '../auth/tokens.js';
import type { Refusal, RefusalsOfAKind } from './refusal-log.js';

export interface SignedRefusalReport {
  report: string;
  signature: string;
}

/** The key reports are signed with (AccessTokens.platformKey): undefined, nothing could be signed secretly. */
export const refusalReportKey = (tokens: AccessTokens): Buffer | undefined => tokens.platformKey('refusal reports');

const sign = (key: Buffer, report: string) => createHmac('sha256', key).update(report, 'utf8').digest('base64url');

interface ReportedKind extends Refusal {
  count: number;
  times: string[];
  last: string;
}

export function signRefusalReport(key: Buffer, refusals: readonly RefusalsOfAKind[]): SignedRefusalReport {
  const kinds: ReportedKind[] = refusals.map(({ refusal, count, times, last }) => ({ ...refusal, count, times: times.map((at) => at.toISOString()), last: last.toISOString() }));
  const report = JSON.stringify({ refusals: kinds });
  return { report, signature: sign(key, report) };
}

/** The refusals of a report, or undefined when its signature is not the platform's. */
export function readRefusalReport(key: Buffer | undefined, { report, signature }: SignedRefusalReport): RefusalsOfAKind[] | undefined {
  if (!key) return undefined;
  const expected = Buffer.from(sign(key, report));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const { refusals } = JSON.parse(report) as { refusals: ReportedKind[] };
  return refusals.map(({ count, times, last, ...refusal }) => ({ refusal, count, times: times.map((at) => new Date(at)), last: new Date(last) }));
}
