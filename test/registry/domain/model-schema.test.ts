import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_2020_12, ModelValidatorCache, checkModelSchema, validateDocument, type ValidationIssue } from '../../../subgraphs/registry/domain/index.js';
import { registryErrorOf } from './helpers.js';

const located = (errors: readonly ValidationIssue[]) => errors.map((e) => `${e.pointer} ${e.keyword}`).sort();

const product = {
  $schema: JSON_SCHEMA_2020_12,
  type: 'object',
  required: ['id', 'weight_kg', 'tags'],
  properties: {
    id: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' },
    weight_kg: { type: 'number', exclusiveMinimum: 0 },
    tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, maxItems: 3 },
    made: { type: 'string', format: 'date' },
    dims: { type: 'object', required: ['w'], properties: { w: { type: 'integer' } }, additionalProperties: false },
  },
  additionalProperties: false,
};

// Expected results are reasoned from JSON Schema 2020-12 (Core and Validation) and RFC 6901,
// not read back from the validator.
describe('validateDocument', () => {
  it('accepts a conforming document with no errors', () => {
    expect(validateDocument(product, { id: 'ABC-1', weight_kg: 0.5, tags: ['a', 'b'], made: '2024-02-29', dims: { w: 3 } })).toEqual({
      valid: true,
      errors: [],
    });
  });

  it('reports each missing required member at the object holding it (the root is "")', () => {
    const result = validateDocument(product, {});
    expect(result.valid).toBe(false);
    expect(located(result.errors)).toEqual([' required', ' required', ' required']);
    expect(result.errors.map((e) => e.params.missingProperty).sort()).toEqual(['id', 'tags', 'weight_kg']);
  });

  it('reports every error of a document, each with its pointer and keyword', () => {
    const result = validateDocument(product, {
      id: 'abc-1', // pattern
      weight_kg: 0, // exclusiveMinimum: 0 is not > 0
      tags: ['a', 'a'], // uniqueItems
      made: '2023-02-29', // format date: no 29 February in 2023 (RFC 3339 §5.7)
      dims: { w: 1.5, h: 2 }, // w: integer; h: additionalProperties
      extra: true, // additionalProperties at the root
    });
    expect(located(result.errors)).toEqual(
      [' additionalProperties', '/dims additionalProperties', '/dims/w type', '/id pattern', '/made format', '/tags uniqueItems', '/weight_kg exclusiveMinimum'].sort(),
    );
    const extra = result.errors.find((e) => e.pointer === '' && e.keyword === 'additionalProperties');
    expect(extra?.params).toEqual({ additionalProperty: 'extra' });
    expect(result.errors.find((e) => e.pointer === '/dims/w')?.schemaPath).toBe('/properties/dims/properties/w/type');
    expect(result.errors.every((e) => e.message.length > 0)).toBe(true);
  });

  it('reports several failing keywords on one value', () => {
    expect(located(validateDocument({ type: 'string', minLength: 5, pattern: '^[0-9]+$' }, 'ab').errors)).toEqual([' minLength', ' pattern']);
  });

  it('escapes "~" and "/" in pointers as RFC 6901 requires', () => {
    const result = validateDocument({ type: 'object', additionalProperties: { type: 'number' } }, { 'a/b': 'x', 'm~n': 'y', ok: 1 });
    expect(located(result.errors)).toEqual(['/a~1b type', '/m~0n type']);
  });

  it('applies 2020-12 prefixItems/items and unevaluatedProperties', () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2, items: false };
    // Strict tuples need minItems. Element 1 must be a number; a third element is refused by
    // items: false, reported at the array.
    expect(located(validateDocument(tuple, ['a', 'b', 3]).errors)).toEqual([' items', '/1 type']);
    expect(validateDocument(tuple, ['a', 2]).valid).toBe(true);

    const closed = {
      type: 'object',
      allOf: [{ type: 'object', properties: { a: { type: 'string' } } }],
      unevaluatedProperties: false,
    };
    // "a" is evaluated by the allOf subschema, "b" by nothing.
    const result = validateDocument(closed, { a: 'x', b: 1 });
    expect(located(result.errors)).toEqual([' unevaluatedProperties']);
    expect(result.errors[0]!.params).toEqual({ unevaluatedProperty: 'b' });
  });

  it('reports a type mismatch of the whole document at the root', () => {
    expect(located(validateDocument(product, []).errors)).toEqual([' type']);
  });
});

describe('checkModelSchema: strict JSON Schema 2020-12', () => {
  const refused = (schema: unknown) => registryErrorOf(() => checkModelSchema(schema));

  it.each([
    ['an unknown keyword', { type: 'string', maxLenght: 3 }],
    ['an unknown format', { type: 'string', format: 'uuid4' }],
    ['a type-specific keyword without its type', { type: 'object', properties: { a: { minimum: 1 } } }],
    ['a required member with no definition', { type: 'object', required: ['a'] }],
    ['an unresolvable $ref', { $ref: '#/$defs/missing' }],
    ['another dialect', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' }],
    ['a boolean schema', true],
    ['an array', [{ type: 'string' }]],
  ])('refuses %s with INVALID_SCHEMA (422)', (_, schema) => {
    const error = refused(schema);
    expect(error.code).toBe('INVALID_SCHEMA');
    expect(error.status).toBe(422);
  });

  it('points meta-schema violations into the schema', () => {
    const error = refused({ type: 'object', minProperties: -1 });
    expect(error.issues.map((issue) => issue.pointer)).toContain('/minProperties');
  });

  it('accepts union types and $defs references', () => {
    const validate = checkModelSchema({
      $schema: JSON_SCHEMA_2020_12,
      $defs: { code: { type: 'string', pattern: '^[A-Z]{2}$' } },
      type: 'object',
      properties: { country: { $ref: '#/$defs/code' }, note: { type: ['string', 'null'] } },
    });
    expect(validate({ country: 'DE', note: null }).valid).toBe(true);
    expect(located(validate({ country: 'de' }).errors)).toEqual(['/country pattern']);
  });
});

describe('ModelValidatorCache', () => {
  const v1 = { id: 'm', version: 1, schema: { $id: 'https://models.example/m', type: 'string' } };
  const v2 = { id: 'm', version: 2, schema: { $id: 'https://models.example/m', type: 'number' } };

  it('compiles a model version once and reuses it', () => {
    const cache = new ModelValidatorCache();
    expect(cache.validatorFor(v1)).toBe(cache.validatorFor(v1));
    expect(cache.size).toBe(1);
  });

  it('keeps versions sharing a $id apart', () => {
    const cache = new ModelValidatorCache();
    expect(cache.validate(v1, 'x').valid).toBe(true);
    expect(cache.validate(v2, 'x').valid).toBe(false);
    expect(cache.validate(v2, 7).valid).toBe(true);
  });

  it('drops the least recently used version beyond its capacity', () => {
    const cache = new ModelValidatorCache(2);
    const first = cache.validatorFor(v1);
    cache.validatorFor(v2);
    cache.validatorFor(v1); // v1 is now the most recently used
    cache.validatorFor({ id: 'n', version: 1, schema: { type: 'boolean' } });
    expect(cache.size).toBe(2);
    expect(cache.validatorFor(v1)).toBe(first);
    expect(() => new ModelValidatorCache(0)).toThrow(RangeError);
  });

  it('refuses an invalid model without caching it', () => {
    const cache = new ModelValidatorCache();
    expect(registryErrorOf(() => cache.validatorFor({ id: 'bad', version: 1, schema: { type: 'nope' } })).code).toBe('INVALID_SCHEMA');
    expect(cache.size).toBe(0);
  });
});
