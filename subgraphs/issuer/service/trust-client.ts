/**
 * The trust service's standing of signing keys at instants, asked through the gateway with
 * `trustKeyStandings`: all of a verdict's questions in one request, answered from one read of the
 * trust graph.
 */
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { KEY_STANDINGS, type KeyStanding, type KeyStandingValue } from '../domain/index.js';

/** Questions per request: the most one `trustKeyStandings` answers. */
const QUESTIONS_PER_REQUEST = 1000;

export type StandingAnswers = { answers: KeyStanding[] } | { unavailable: string };

export class TrustClient {
  constructor(private readonly gateway: GatewayClient) {}

  /** Every question answered, or why the trust service could not answer (never a thrown error). */
  async standings(questions: readonly { kid: string; at: string }[]): Promise<StandingAnswers> {
    const answers: KeyStanding[] = [];
    try {
      for (let start = 0; start < questions.length; start += QUESTIONS_PER_REQUEST) {
        const chunk = questions.slice(start, start + QUESTIONS_PER_REQUEST);
        const data = await this.gateway.request<{ trustKeyStandings: ({ standing?: unknown; reason?: unknown } | null)[] }>(
          'query IssuerKeyStandings($questions: [TrustKeyStandingQuestion!]!) { trustKeyStandings(questions: $questions) { standing reason } }',
          { questions: chunk.map(({ kid, at }) => ({ kid, at })) },
        );
        chunk.forEach((question, i) => {
          const answer = data.trustKeyStandings[i];
          const standing = (KEY_STANDINGS as readonly unknown[]).includes(answer?.standing) ? (answer!.standing as KeyStandingValue) : 'unknown';
          // The question's own instant is kept, so the answer matches it whatever spelling trust echoes.
          answers.push({ kid: question.kid, at: question.at, standing, ...(typeof answer?.reason === 'string' ? { reason: answer.reason } : {}) });
        });
      }
    } catch (error) {
      return { unavailable: (error as Error).message };
    }
    return { answers };
  }
}
