/** The witnessed master list: verdicts computed on every read against the current witness set. */
import { Cost } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { quorumVerdict, type MasterListEntry, type QuorumVerdict, type WitnessSet } from '../domain/index.js';
import { MasterListEntryInput, MasterListEntryType, MasterListType, type QuorumVerdictType, WitnessSetInput, WitnessSetType } from '../schema/types.js';
import { orThrow, present, type TrustDependencies } from './shared.js';

@Resolver()
export class MasterListResolver {
  constructor(private readonly deps: TrustDependencies) {}

  // Every entry's cosignatures are verified on each read (the entries' assumed size, 200, times about 0.5 ms).
  @Cost(10_000)
  @Query(() => MasterListType, { description: 'The M-of-K shape, the witnesses and every entry with its live verdict (GET /master-list).' })
  async trustMasterList(): Promise<MasterListType> {
    const [witnessSet, entries] = await Promise.all([this.deps.masterList.witnessSet(), this.deps.masterList.masterListEntries()]);
    return {
      origin: this.deps.masterListOrigin,
      shape: witnessSet ? `${witnessSet.m}-of-${witnessSet.keys.length}` : 'none',
      m: witnessSet?.m ?? null,
      k: witnessSet?.keys.length ?? 0,
      witnessSet: witnessSet ? { m: witnessSet.m, keys: [...witnessSet.keys], recordedAt: witnessSet.recorded_at } : null,
      entries: entries.map((entry) => this.entryOut(entry, witnessSet)),
    };
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => WitnessSetType, { description: 'Replaces the witness set (POST /master-list/witnesses): 1 <= m <= K distinct Ed25519 keys, else 422.' })
  async replaceTrustWitnessSet(@Arg('input', () => WitnessSetInput) input: WitnessSetInput): Promise<WitnessSetType> {
    const stored = orThrow(await this.deps.masterList.replaceWitnessSet({ m: input.m, keys: input.keys }));
    return { m: stored.m, keys: [...stored.keys], recordedAt: stored.recorded_at };
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => MasterListEntryType, { description: 'Upserts an entry with its cosignatures and verifies it at once (POST /master-list/entries).' })
  async upsertTrustMasterListEntry(@Arg('input', () => MasterListEntryInput) input: MasterListEntryInput): Promise<MasterListEntryType> {
    const { entry, created } = orThrow(await this.deps.masterList.upsertMasterListEntry(present({ id: input.id, body: input.body, cosignatures: input.cosignatures })));
    return { ...this.entryOut(entry, await this.deps.masterList.witnessSet()), created };
  }

  private entryOut(entry: MasterListEntry, witnessSet: WitnessSet | undefined): MasterListEntryType {
    return { id: entry.id, body: entry.body, cosignatures: [...entry.cosignatures], verdict: verdictOut(entry, witnessSet, this.deps.masterListOrigin) };
  }
}

function verdictOut(entry: MasterListEntry, witnessSet: WitnessSet | undefined, origin: string): QuorumVerdictType {
  if (!witnessSet) {
    return {
      valid: 0,
      required: null,
      quorate: false,
      reasons: entry.cosignatures.map(({ kid }, index) => ({ index, kid, outcome: 'UNKNOWN_WITNESS' })),
      explanation: 'no witness set is configured, so no cosignature can count',
    };
  }
  const verdict = quorumVerdict(entry, witnessSet, origin);
  return { ...verdict, reasons: [...verdict.reasons], explanation: explain(verdict) };
}

function explain(verdict: QuorumVerdict): string {
  const failed = new Map<string, number>();
  for (const { outcome } of verdict.reasons) if (outcome !== 'VALID') failed.set(outcome, (failed.get(outcome) ?? 0) + 1);
  const others = [...failed].map(([outcome, count]) => `${count} ${outcome}`).join(', ');
  const counted = `${verdict.valid} valid cosignature${verdict.valid === 1 ? '' : 's'} from distinct witnesses of the current set`;
  return `${counted}, ${verdict.required} required: ${verdict.quorate ? 'quorate' : 'not quorate'}${others ? ` (not counted: ${others})` : ''}`;
}
