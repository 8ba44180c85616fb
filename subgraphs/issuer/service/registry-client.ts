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

export type TypeRefCheck =
  | { ok: true; model: { id: string; version: number; status: string } }
  | { ok: false; reason: 'UNKNOWN_MODEL' }
  | { ok: false; reason: 'INVALID_CONFIG_VECTOR'; errors: ValidationError[] };

export const MODEL_QUERY = `query IssuerTypeRef($id: ID!, $version: Int) {
  registryModel(id: $id, version: $version) { id version kind status }
}`;

export const VALIDATE_QUERY = `query IssuerValidateConfigVector($id: ID!, $version: Int, $document: JSON!) {
  registryValidateDocument(modelId: $id, version: $version, document: $document)
}`;

export class RegistryClient {
  constructor(private readonly gateway: GatewayClient) {}

  /** Looks the model up, then validates the config vector against that very version. */
  async checkTypeRef(typeRef: { id: string; version: number }, configVector: object): Promise<TypeRefCheck> {
    let found: { registryModel: { id: string; version: number; kind: string; status: string } | null };
    try {
      found = await this.#ask(MODEL_QUERY, { id: typeRef.id, version: typeRef.version });
    } catch (error) {
      // An id the registry refuses to look up (outside its syntax) names no model either.
      if (error instanceof ProblemError && (error.problem.status === 400 || error.problem.status === 404)) return { ok: false, reason: 'UNKNOWN_MODEL' };
      throw error;
    }
    const model = found.registryModel;
    if (!model || model.version !== typeRef.version) return { ok: false, reason: 'UNKNOWN_MODEL' };
    const validated = await this.#ask<{ registryValidateDocument: { valid?: unknown; errors?: unknown } }>(VALIDATE_QUERY, {
      id: typeRef.id,
      version: typeRef.version,
      document: configVector,
    });
    const answer = validated.registryValidateDocument;
    if (answer.valid === true) return { ok: true, model: { id: model.id, version: model.version, status: model.status } };
    const errors = Array.isArray(answer.errors)
      ? answer.errors.map((error: { pointer?: unknown; message?: unknown; keyword?: unknown }) => ({
          pointer: String(error.pointer ?? ''),
          message: String(error.message ?? 'invalid'),
          ...(typeof error.keyword === 'string' ? { keyword: error.keyword } : {}),
        }))
      : [];
    return { ok: false, reason: 'INVALID_CONFIG_VECTOR', errors };
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
