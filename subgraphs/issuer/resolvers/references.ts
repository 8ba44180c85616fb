import { perRequest } from '../../../lib/graphql/batching.js';
import { Passport } from '../schema/types.js';
import type { IssuerService } from '../service/issuer-service.js';

/** `Passport` entities named by other subgraphs, loaded in one query per request however many there are. */
export function passportReferences(issuer: IssuerService) {
  const loaderFor = perRequest<string, Passport | null>(async (ids) => {
    const rows = new Map((await issuer.findPassports(ids)).map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = rows.get(id);
      return row ? Passport.from(row) : null;
    });
  });
  return { Passport: (reference: Record<string, unknown>, context: unknown) => loaderFor(context).load(String(reference.id)) };
}
