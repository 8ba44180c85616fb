import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { JSON_SCHEMA_2020_12, PROFILE_MANIFEST_EXAMPLES, checkProfileManifest, profileManifestSchema } from '../../../subgraphs/registry/domain/index.js';

describe('profile manifest schema', () => {
  // A stock validator, set up here rather than through the registry's own compile path.
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajvFormats.default(ajv);
  const validate = ajv.compile(profileManifestSchema);

  it('is a JSON Schema 2020-12 that a standard validator compiles in strict mode', () => {
    expect(profileManifestSchema.$schema).toBe(JSON_SCHEMA_2020_12);
    expect(ajv.validateSchema(profileManifestSchema)).toBe(true);
  });

  it('carries examples, each of which validates', () => {
    expect(profileManifestSchema.examples.length).toBeGreaterThanOrEqual(2);
    for (const example of profileManifestSchema.examples) {
      expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
      expect(checkProfileManifest(example)).toEqual({ valid: true, errors: [] });
    }
  });

  it('survives a JSON round trip unchanged, as the API serves it', () => {
    expect(JSON.parse(JSON.stringify(profileManifestSchema))).toEqual(profileManifestSchema);
  });

  const base = PROFILE_MANIFEST_EXAMPLES[0];
  it.each([
    ['a missing model', { ...base, model: undefined }, '', 'required'],
    ['a model without version', { ...base, model: 'battery-passport' }, '/model', 'pattern'],
    ['an empty jurisdiction list', { ...base, jurisdictions: [] }, '/jurisdictions', 'minItems'],
    ['a lower-case jurisdiction', { ...base, jurisdictions: ['eu'] }, '/jurisdictions/0', 'pattern'],
    ['a category with a slash', { ...base, product_categories: ['battery/ev'] }, '/product_categories/0', 'pattern'],
    ['a claim that is not a JSON pointer', { ...base, required_claims: ['weight_kg'] }, '/required_claims/0', 'format'],
    ['an unknown audience', { ...base, claim_access: { '/x': 'everyone' } }, '/claim_access/~1x', 'enum'],
    ['a date instead of a date-time', { ...base, effective_from: '2027-02-18' }, '/effective_from', 'format'],
    ['a non-SemVer version', { ...base, version: '1.0' }, '/version', 'pattern'],
    ['another type', { ...base, type: 'Profile' }, '/type', 'const'],
    ['an unknown member', { ...base, jurisdiction: 'EU' }, '', 'additionalProperties'],
  ])('refuses %s', (_, manifest, pointer, keyword) => {
    const document = JSON.parse(JSON.stringify(manifest));
    expect(validate(document)).toBe(false);
    const result = checkProfileManifest(document);
    expect(result.valid).toBe(false);
    expect(result.errors.map((e) => [e.pointer, e.keyword])).toEqual([[pointer, keyword]]);
  });
});
