/**
 * The trust service's standing of signing keys at instants, asked through the gateway with
 * `trustKeyStandings`, answered from one read of the trust graph.
 */
import DataLoader from 'dataloader';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { KEY_STANDINGS, type KeyStandingValue } from '../../../lib/formats/trust/key-standing.js';
import type { KeyStanding } from '../domain/index.js';

/**
 * Questions per request to the gateway: a standing a caller names weighs 400, so
 * 250 of them cost 100,000 (subgraphs/trust/resolvers/graph.ts, STANDING_WEIGHT), half of GRAPHQL_MAX_COST's default.
 */
const QUESTIONS_PER_REQUEST = 250;

export const KEY_STANDINGS_QUERY = 'query IssuerKeyStandings($questions: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $questions) { standing reason } }';

export type StandingAnswers = { answers: KeyStanding[] } | { unavailable: string };

type Question = { kid: string; at: string };

export class TrustClient {
  /**
   * The questions of every verdict resolved in the same tick (the passports of a list, aliases),
   * put to the trust service together: one request, not one per verdict. Nothing is cached.
   */
  readonly #standings: DataLoader<Question, KeyStanding>;

  constructor(gateway: GatewayClient) {
    this.#standings = new DataLoader<Question, KeyStanding>(
      async (questions) => {
        const asked = [...new Map(questions.map((question) => [`${question.kid} ${question.at}`, question])).values()];
        const data = await gateway.request<{ trustKeyStandings: ({ standing?: unknown; reason?: unknown } | null)[] }>(KEY_STANDINGS_QUERY, { questions: asked.map(({ kid, at }) => ({ kid, at })) });
        const answers = new Map(
          asked.map((question, i): [string, KeyStanding] => {
            const answer = data.trustKeyStandings[i];
            const standing = (KEY_STANDINGS as readonly unknown[]).includes(answer?.standing) ? (answer!.standing as KeyStandingValue) : 'unknown';
            // The question's own instant is kept, so the answer matches it whatever spelling trust echoes.
            return [`${question.kid} ${question.at}`, { kid: question.kid, at: question.at, standing, ...(typeof answer?.reason === 'string' ? { reason: answer.reason } : {}) }];
          }),
        );
        return questions.map((question) => answers.get(`${question.kid} ${question.at}`)!);
      },
      { cache: false, maxBatchSize: QUESTIONS_PER_REQUEST },
    );
  }

  /** Every question answered, or why the trust service could not answer (never a thrown error). */
  async standings(questions: readonly Question[]): Promise<StandingAnswers> {
    try {
      return { answers: await Promise.all(questions.map((question) => this.#standings.load(question))) };
    } catch (error) {
      return { unavailable: (error as Error).message };
    }
  }
}
