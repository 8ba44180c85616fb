import type { GraphQLResolveInfo } from 'graphql';
import { perRequest } from '../../../lib/graphql/batching.js';
import { asksOnly } from '../../../lib/graphql/selection.js';
import type { PassportRow, PassportSummaryRow } from '../data/passport-repository.js';
import { Passport } from '../schema/types.js';
import type { IssuerService } from '../service/issuer-service.js';

/**
 * `Passport` entities named by other subgraphs, loaded in one query per request however many there
 * are. Where the request asks only summary fields of them (the archive's snapshots asking each one's
 * status, say), only the summary columns are read, as passports(ids) does.
 */
export function passportReferences(issuer: IssuerService) {
  const loader = (read: (ids: readonly string[]) => Promise<(PassportRow | PassportSummaryRow)[]>) =>
    perRequest<string, Passport | null>(async (ids) => {
      const rows = new Map((await read(ids)).map((row) => [row.id, row]));
      return ids.map((id) => {
        const row = rows.get(id);
        return row ? Passport.from(row) : null;
      });
    });
  const wholeRows = loader((ids) => issuer.findPassports(ids));
  const summaries = loader((ids) => issuer.findPassportSummaries(ids));
  // Every representation of one `_entities` field shares its info: its selection set is read once.
  const summaryOnly = new WeakMap<GraphQLResolveInfo, boolean>();
  const asksSummaryOnly = (info: GraphQLResolveInfo) => {
    let only = summaryOnly.get(info);
    if (only === undefined) summaryOnly.set(info, (only = asksOnly(info, Passport.SUMMARY_FIELDS)));
    return only;
  };
  return {
    Passport: (reference: Record<string, unknown>, context: unknown, info: GraphQLResolveInfo) => (asksSummaryOnly(info) ? summaries : wholeRows)(context).load(String(reference.id)),
  };
}
