/**
 * The registry, as the issuer asks it through the gateway (the cross-service contract's
 * `registryModel` and `registryValidateDocument`): does a type ref name a model, and does a config
 * vector validate against it.
 */
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { ProblemError } from '../../../lib/problem.js';

export interface ValidationError {
  pointer: string;
  message: string;
  keyword?: string;
}

/** A config vector's validation against a model version: valid, or every error. */
export type ConfigVectorCheck = { ok: true } | { ok: false; errors: ValidationError[] };

export const MODEL_QUERY = `query IssuerTypeRef($id: ID!, $version: Int) {
  registryModel(id: $id, version: $version) { id version kind status }
}`;

export const VALIDATE_QUERY = `query IssuerValidateConfigVector($id: ID!, $version: Int, $document: JSON!) {
  registryValidateDocument(modelId: $id, version: $version, document: $document)
}`;

export class RegistryClient {
  constructor(private readonly gateway: GatewayClient) {}

  /**
   * Whether a type ref names a model at that very version. Asked once per model version of a
   * creation, however many passports it creates.
   */
  async hasModel(typeRef: { id: string; version: number }): Promise<boolean> {
    let found: { registryModel: { id: string; version: number; kind: string; status: string } | null };
    try {
      found = await this.#ask(MODEL_QUERY, { id: typeRef.id, version: typeRef.version });
    } catch (error) {
      // An id the registry refuses to look up (outside its syntax) names no model either.
      if (error instanceof ProblemError && (error.problem.status === 400 || error.problem.status === 404)) return false;
      throw error;
    }
    return found.registryModel?.version === typeRef.version;
  }

  /** Validates a config vector against a model version the registry has (hasModel). */
  async validateConfigVector(typeRef: { id: string; version: number }, configVector: object): Promise<ConfigVectorCheck> {
    const validated = await this.#ask<{ registryValidateDocument: { valid?: unknown; errors?: unknown } }>(VALIDATE_QUERY, {
      id: typeRef.id,
      version: typeRef.version,
      document: configVector,
    });
    const answer = validated.registryValidateDocument;
    if (answer.valid === true) return { ok: true };
    const errors = Array.isArray(answer.errors)
      ? answer.errors.map((error: { pointer?: unknown; message?: unknown; keyword?: unknown }) => ({
          pointer: String(error.pointer ?? ''),
          message: String(error.message ?? 'invalid'),
          ...(typeof error.keyword === 'string' ? { keyword: error.keyword } : {}),
        }))
      : [];
    return { ok: false, errors };
  }

  /** A registry that cannot answer makes creation impossible for now: 503, never a masked 500. */
  async #ask<T>(query: string, variables: Record<string, unknown>): Promise<T> {
    try {
      return await this.gateway.request<T>(query, variables);
    } catch (error) {
      if (error instanceof ProblemError && error.problem.status < 500) throw error;
      throw new ProblemError(503, 'REGISTRY_UNAVAILABLE', `The registry could not check the type ref: ${(error as Error).message}`, { retry_after: 5 });
    }
  }
}
