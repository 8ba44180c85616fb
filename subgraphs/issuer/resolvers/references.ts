import type { GraphQLResolveInfo } from 'graphql';
import { asksOnly } from '../../../lib/graphql/selection.js';
import { Passport } from '../schema/types.js';
import type { IssuerService } from '../service/issuer-service.js';

/**
 * `Passport` entities named by other subgraphs, read through the issuer's passport loaders, which
 * batch every load of one turn into one query however many there are. Where the request asks only
 * summary fields of them (the archive's snapshots asking each one's status, say), only the summary
 * columns are read, as passports(ids) does.
 */
export function passportReferences(issuer: IssuerService) {
  // Every representation of one `_entities` field shares its info: its selection set is read once.
  const summaryOnly = new WeakMap<GraphQLResolveInfo, boolean>();
  const asksSummaryOnly = (info: GraphQLResolveInfo) => {
    let only = summaryOnly.get(info);
    if (only === undefined) summaryOnly.set(info, (only = asksOnly(info, Passport.SUMMARY_FIELDS)));
    return only;
  };
  return {
    Passport: async (reference: Record<string, unknown>, _context: unknown, info: GraphQLResolveInfo) => {
      const id = String(reference.id);
      const row = asksSummaryOnly(info) ? await issuer.findPassportSummary(id) : await issuer.findPassport(id);
      return row ? Passport.from(row) : null;
    },
  };
}
