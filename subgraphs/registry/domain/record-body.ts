import type { Json } from '../../../lib/crypto/index.js';
import { RegistryError, type ValidationIssue } from './errors.js';
import type { RecordKind } from './kinds.js';
import { JSON_SCHEMA_2020_12, checkModelSchema, type DocumentValidator } from './model-schema.js';
import { checkProfileManifest, isProfileManifestBody } from './profile-manifest.js';
import { JURISDICTION_PATTERN, PRODUCT_CATEGORY_PATTERN, type Scope } from './scope.js';
import { normalizeInstant } from './time.js';

export type JsonObject = { [member: string]: Json };

const MAX_DEPTH = 64;

function isJsonValue(value: unknown, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && Object.values(value).every((member) => isJsonValue(member, depth + 1));
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && isJsonValue(value, 0);
}

/**
 * The body of a model record: a title, the JSON Schema itself, and what the model applies to.
 * Examples live in the schema's own `examples` keyword, where standard tools look for them.
 */
export const modelBodySchema = {
  $schema: JSON_SCHEMA_2020_12,
  title: 'Registry model record body',
  type: 'object',
  required: ['title', 'schema'],
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    description: { type: 'string', maxLength: 4000 },
    schema: { description: 'The model: a JSON Schema 2020-12.', type: 'object' },
    applicability: {
      type: 'object',
      required: ['product_categories', 'jurisdictions'],
      properties: {
        product_categories: {
          type: 'array',
          items: { type: 'string', pattern: PRODUCT_CATEGORY_PATTERN, maxLength: 128 },
          minItems: 1,
          uniqueItems: true,
        },
        jurisdictions: { type: 'array', items: { type: 'string', pattern: JURISDICTION_PATTERN }, minItems: 1, uniqueItems: true },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

let modelBodyValidator: DocumentValidator | undefined;

const under = (prefix: string, issues: readonly ValidationIssue[]): ValidationIssue[] => issues.map((issue) => ({ ...issue, pointer: `${prefix}${issue.pointer}` }));

function checkModelBody(body: JsonObject): void {
  modelBodyValidator ??= checkModelSchema(modelBodySchema);
  const shape = modelBodyValidator(body);
  if (!shape.valid) throw new RegistryError('INVALID_RECORD', 'the model record body is malformed', shape.errors);
  let validate: DocumentValidator;
  try {
    validate = checkModelSchema(body.schema);
  } catch (error) {
    if (error instanceof RegistryError) throw new RegistryError(error.code, error.message, under('/schema', error.issues));
    throw error;
  }
  const examples = (body.schema as { examples?: unknown }).examples;
  const failures = (Array.isArray(examples) ? examples : []).flatMap((example, index) => under(`/schema/examples/${index}`, validate(example).errors));
  if (failures.length > 0) throw new RegistryError('INVALID_RECORD', 'an example in the model does not validate against it', failures);
}

/**
 * Checks a record body for its kind and returns it typed: every body is a JSON object; a model's
 * schema must compile in strict mode and its examples validate; a generic record whose `type` is
 * `ProfileManifest` must be a valid profile manifest whose profile_id is the record id.
 */
export function checkRecordBody(kind: RecordKind, id: string, body: unknown): JsonObject {
  if (!isJsonObject(body)) throw new RegistryError('INVALID_RECORD', 'a record body is a JSON object');
  if (kind === 'model') checkModelBody(body);
  if (kind === 'generic' && isProfileManifestBody(body)) {
    const result = checkProfileManifest(body);
    if (!result.valid) throw new RegistryError('INVALID_RECORD', 'the profile manifest does not validate', result.errors);
    if (body.profile_id !== id) {
      throw new RegistryError('INVALID_RECORD', `a profile manifest is registered under its profile_id (${String(body.profile_id)}), not ${id}`);
    }
  }
  return body;
}

/** The effective window a body declares itself (profile manifests do); undefined otherwise. */
export function windowOfBody(kind: RecordKind, body: JsonObject): { effectiveFrom: string | null; effectiveTo: string | null } | undefined {
  if (kind !== 'generic' || !isProfileManifestBody(body)) return undefined;
  const instant = (value: unknown) => (typeof value === 'string' ? (normalizeInstant(value) ?? null) : null);
  return { effectiveFrom: instant(body.effective_from), effectiveTo: instant(body.effective_to) };
}

/** What a model or profile version applies to, read from its body; undefined for other records. */
export function scopeOfBody(kind: RecordKind, body: JsonObject): Scope | undefined {
  const declared = kind === 'model' ? body.applicability : kind === 'generic' && isProfileManifestBody(body) ? body : undefined;
  if (typeof declared !== 'object' || declared === null || Array.isArray(declared)) return undefined;
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : []);
  return { productCategories: strings(declared.product_categories), jurisdictions: strings(declared.jurisdictions) };
}
