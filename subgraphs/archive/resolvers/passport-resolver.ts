/** The archive's part of the Passport entity: its snapshots, for every passport of a request in one query. */
import { ListSize } from '../../../lib/graphql/cost.js';
import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { perRequest } from '../../../lib/graphql/batching.js';
import type { SnapshotRepository } from '../data/snapshot-repository.js';
import { ArchivedPassport, Snapshot } from '../schema/snapshot.js';

@Resolver(() => ArchivedPassport)
export class PassportSnapshotsResolver {
  readonly #snapshots = perRequest<string, Snapshot[]>(async (passportIds) => {
    const byPassport = new Map<string, Snapshot[]>();
    for (const record of await this.repository.ofPassports(passportIds)) {
      const list = byPassport.get(record.passportId) ?? [];
      list.push(Snapshot.from(record));
      byPassport.set(record.passportId, list);
    }
    return passportIds.map((id) => byPassport.get(id) ?? []);
  });

  constructor(private readonly repository: SnapshotRepository) {}

  // A passport is snapshotted a few times in its life.
  @ListSize({ assumedSize: 20 })
  @FieldResolver(() => [Snapshot], { description: 'Every snapshot the archive holds of the passport, oldest first.' })
  snapshots(@Root() passport: ArchivedPassport, @Ctx() context: unknown): Promise<Snapshot[]> {
    return this.#snapshots(context).load(passport.id);
  }
}
