/**
 * How a document is checked against a model's JSON Schema 2020-12, wherever it is checked: in the
 * registry (registryValidateDocument, record bodies, profile manifests) and in the issuer, which
 * checks the config vectors of a creation in process against the model the registry serves, so
 * that the two can never judge one document apart.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';

/** One reason a document fails its schema. */
export interface ValidationIssue {
  /** RFC 6901 JSON Pointer into the validated instance; '' is the whole instance. */
  readonly pointer: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `format`, ...). */
  readonly keyword: string;
  readonly message: string;
  /** Location of the failing keyword in the schema, as a JSON Pointer (ajv's schemaPath without '#'). */
  readonly schemaPath: string;
  /** The keyword's parameters, e.g. `{ missingProperty: 'weight_kg' }` for `required`. */
  readonly params: Readonly<Record<string, unknown>>;
}

const addFormats = ajvFormats.default;

const MODEL_AJV_OPTIONS = { strict: true, allowUnionTypes: true, allErrors: true } as const;

/**
 * The one instance that checks schemas against the JSON Schema 2020-12 meta-schema. Each new
 * instance compiles that meta-schema again on its first check (~20 ms of CPU, against ~1 ms for the
 * rest of a model's check); checking a schema adds nothing to an instance's registry.
 */
let metaSchemaChecker: Ajv2020 | undefined;

/** A schema that fails the JSON Schema 2020-12 meta-schema: Ajv's failures, and its words for them as its own compile says them. */
export class MetaSchemaViolation extends Error {
  constructor(
    readonly errors: ErrorObject[],
    text: string,
  ) {
    super(`schema is invalid: ${text}`);
  }
}

/**
 * A fresh validator instance per compilation, so that two versions of one model sharing a `$id`
 * never clash inside ajv's schema registry. Strict mode (every strict check an error, not a log
 * line) refuses unknown keywords and formats, ignored keywords and ambiguous types; union types
 * (`"type": ["string", "null"]`) stay allowed, as they are plain JSON Schema. It does not check
 * the schema against the meta-schema: compileModelSchema does that first, on metaSchemaChecker.
 */
function newModelAjv(): Ajv2020 {
  const ajv = new Ajv2020({ ...MODEL_AJV_OPTIONS, validateSchema: false });
  addFormats(ajv);
  return ajv;
}

/** A model's schema compiled; throws MetaSchemaViolation for one that fails the meta-schema, Ajv's compile error for one strict mode refuses. */
export function compileModelSchema(schema: object): ValidateFunction {
  if (!metaSchemaChecker) {
    metaSchemaChecker = new Ajv2020(MODEL_AJV_OPTIONS);
    addFormats(metaSchemaChecker);
  }
  if (!(metaSchemaChecker.validateSchema(schema) as boolean)) {
    const errors = [...(metaSchemaChecker.errors ?? [])];
    throw new MetaSchemaViolation(errors, metaSchemaChecker.errorsText(errors));
  }
  return newModelAjv().compile(schema);
}

export function toValidationIssues(errors: readonly ErrorObject[] | null | undefined): ValidationIssue[] {
  return (errors ?? []).map((error) => ({
    pointer: error.instancePath,
    keyword: error.keyword,
    message: error.message ?? `fails "${error.keyword}"`,
    schemaPath: error.schemaPath.replace(/^#/, ''),
    params: error.params,
  }));
}
