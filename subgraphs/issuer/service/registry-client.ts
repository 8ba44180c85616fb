/**
 * The registry, as the issuer asks it through the gateway (the cross-service contract's
 * `registryModel`): does a type ref name a model, and does a config vector validate against it. The
 * config vectors are checked in process against the model's JSON Schema as the registry serves it,
 * compiled as the registry compiles it (lib/formats/registry/model-schema.ts): a creation of a
 * thousand passports asks the registry once per model version, not once per passport.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileModelSchema, toValidationIssues } from '../../../lib/formats/registry/model-schema.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { ProblemError, unprocessable } from '../../../lib/problem.js';

export interface ValidationError {
  pointer: string;
  message: string;
  keyword?: string;
}

/** A config vector's validation against a model version: valid, or every error. */
export type ConfigVectorCheck = { ok: true } | { ok: false; errors: ValidationError[] };

/** Asked once per model version while its validator is kept: a version never changes once stored. */
export const MODEL_QUERY = `query IssuerTypeRef($id: ID!, $version: Int) {
  registryModel(id: $id, version: $version) { id version body }
}`;

/** Compiled models kept, at most: the least recently used is compiled again when asked. */
const COMPILED_MODELS = 256;

export class RegistryClient {
  /** Validators by model version: a model version never changes once stored. */
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(private readonly gateway: GatewayClient) {}

  /**
   * The check of config vectors against the model a type ref names at that very version; undefined
   * when the registry has no such model.
   */
  async model(typeRef: { id: string; version: number }): Promise<((configVector: object) => ConfigVectorCheck) | undefined> {
    const key = `${typeRef.id}@${typeRef.version}`;
    let validate = this.#compiled.get(key);
    if (validate) {
      // Most recently used last.
      this.#compiled.delete(key);
    } else {
      let found: { registryModel: { version: number; body?: { schema?: unknown } } | null };
      try {
        found = await this.#ask(MODEL_QUERY, { id: typeRef.id, version: typeRef.version });
      } catch (error) {
        // An id the registry refuses to look up (outside its syntax) names no model either.
        if (error instanceof ProblemError && (error.problem.status === 400 || error.problem.status === 404)) return undefined;
        throw error;
      }
      if (found.registryModel?.version !== typeRef.version) return undefined;
      validate = compiledModel(typeRef, found.registryModel.body?.schema);
    }
    this.#compiled.set(key, validate);
    if (this.#compiled.size > COMPILED_MODELS) this.#compiled.delete(this.#compiled.keys().next().value as string);
    const compiled = validate;
    return (configVector) => {
      if (compiled(configVector)) return { ok: true };
      return { ok: false, errors: toValidationIssues(compiled.errors).map(({ pointer, message, keyword }) => ({ pointer, message, keyword })) };
    };
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

/**
 * The validator of a model version's JSON Schema, compiled as the registry compiles it. A version
 * stored without a schema it compiles (written before the registry required one, or loaded from
 * elsewhere) checks no config vector: the type ref is unusable, a 422 of the request naming it.
 */
function compiledModel(typeRef: { id: string; version: number }, schema: unknown): ValidateFunction {
  const unusable = (why: string) =>
    unprocessable('UNUSABLE_TYPE_REF', `the registry's model ${typeRef.id} v${typeRef.version} ${why}: no config vector can be checked against it`, { type_ref: typeRef });
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw unusable('has no JSON Schema');
  try {
    return compileModelSchema(schema);
  } catch (error) {
    throw unusable(`has a JSON Schema that does not compile (${(error as Error).message})`);
  }
}
