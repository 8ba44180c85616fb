/**
 * The trust service's standing of a signing key at an instant (the contract's `trustKeyStanding`),
 * asked through the gateway, many questions per request as aliases.
 */
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { KEY_STANDINGS, type KeyStanding, type KeyStandingValue } from '../domain/index.js';

/** Questions per request; the gateway refuses more than 60 aliases. */
const QUESTIONS_PER_REQUEST = 40;

export type StandingAnswers = { answers: KeyStanding[] } | { unavailable: string };

export class TrustClient {
  constructor(private readonly gateway: GatewayClient) {}

  /** Every question answered, or why the trust service could not answer (never a thrown error). */
  async standings(questions: readonly { kid: string; at: string }[]): Promise<StandingAnswers> {
    const answers: KeyStanding[] = [];
    try {
      for (let start = 0; start < questions.length; start += QUESTIONS_PER_REQUEST) {
        const chunk = questions.slice(start, start + QUESTIONS_PER_REQUEST);
        const declarations = chunk.map((_, i) => `$k${i}: String!, $a${i}: DateTimeISO!`).join(', ');
        const fields = chunk.map((_, i) => `s${i}: trustKeyStanding(kid: $k${i}, at: $a${i})`).join('\n  ');
        const variables = Object.fromEntries(chunk.flatMap((question, i) => [[`k${i}`, question.kid], [`a${i}`, question.at]]));
        const data = await this.gateway.request<Record<string, { standing?: unknown; reason?: unknown } | null>>(
          `query IssuerKeyStanding(${declarations}) {\n  ${fields}\n}`,
          variables,
        );
        chunk.forEach((question, i) => {
          const answer = data[`s${i}`];
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
