import type { ValidateFunction } from 'ajv/dist/2020.js';
import { compileModelSchema, MetaSchemaViolation, toValidationIssues } from '../../../lib/formats/registry/model-schema.js';
import { RegistryError, type ValidationIssue } from './errors.js';
import { formatRecordRef, type RecordRef } from './identifiers.js';

/** The meta-schema URI of JSON Schema draft 2020-12, the only dialect models may declare. */
export const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** The outcome of validating a document: every error, not just the first. */
export interface ValidationResult {
  readonly valid: boolean;
  readonly errors: readonly ValidationIssue[];
}

/** A compiled model: validates documents against it. */
export type DocumentValidator = (document: unknown) => ValidationResult;

function wrap(validate: ValidateFunction): DocumentValidator {
  return (document) => {
    const valid = validate(document) as boolean;
    return { valid, errors: valid ? [] : toValidationIssues(validate.errors) };
  };
}

/**
 * Compiles a model's JSON Schema, or throws INVALID_SCHEMA: the schema must be an object, declare
 * no dialect other than 2020-12, satisfy the 2020-12 meta-schema (those failures come back as
 * issues with pointers into the schema) and compile in strict mode with the standard formats.
 */
export function checkModelSchema(schema: unknown): DocumentValidator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new RegistryError('INVALID_SCHEMA', 'a model is a JSON Schema object');
  }
  const dialect = (schema as { $schema?: unknown }).$schema;
  if (dialect !== undefined && dialect !== JSON_SCHEMA_2020_12) {
    throw new RegistryError('INVALID_SCHEMA', `a model is a JSON Schema 2020-12 ("$schema": "${JSON_SCHEMA_2020_12}"); got ${JSON.stringify(dialect)}`);
  }
  try {
    return wrap(compileModelSchema(schema));
  } catch (error) {
    if (error instanceof MetaSchemaViolation) {
      throw new RegistryError('INVALID_SCHEMA', 'the model does not satisfy the JSON Schema 2020-12 meta-schema', toValidationIssues(error.errors));
    }
    // Strict-mode violations, unknown formats and unresolvable $refs surface as compile errors.
    throw new RegistryError('INVALID_SCHEMA', `the model does not compile in strict mode: ${(error as Error).message}`);
  }
}

/** Validates one document against a schema (compiled afresh; see ModelValidatorCache to reuse). */
export function validateDocument(schema: unknown, document: unknown): ValidationResult {
  return checkModelSchema(schema)(document);
}

/** A model version and its schema, as the data layer loads it. */
export interface ModelSchemaVersion extends RecordRef {
  readonly schema: unknown;
}

/**
 * Compiled validators keyed by model version. A model version never changes once written, so an
 * entry never goes stale; the least recently used entry is dropped beyond `capacity`.
 */
export class ModelValidatorCache {
  readonly #entries = new Map<string, DocumentValidator>();

  constructor(readonly capacity = 256) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('cache capacity must be a positive integer');
  }

  get size(): number {
    return this.#entries.size;
  }

  validatorFor(model: ModelSchemaVersion): DocumentValidator {
    const key = formatRecordRef(model);
    const cached = this.#entries.get(key);
    if (cached) {
      this.#entries.delete(key);
      this.#entries.set(key, cached);
      return cached;
    }
    const validator = checkModelSchema(model.schema);
    this.#entries.set(key, validator);
    if (this.#entries.size > this.capacity) {
      this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return validator;
  }

  validate(model: ModelSchemaVersion, document: unknown): ValidationResult {
    return this.validatorFor(model)(document);
  }
}
