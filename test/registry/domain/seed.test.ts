import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  applicableAt,
  buildSampleRegister,
  checkProfileManifest,
  parseRecordRef,
  seedRegister,
  supersessionChain,
  type RecordKind,
  type RecordVersion,
} from '../../../subgraphs/registry/domain/index.js';

const seed = seedRegister();
const byKind = (kind: RecordKind) => seed.filter((r) => r.kind === kind);
const find = (kind: RecordKind, id: string, version?: number) => seed.find((r) => r.kind === kind && r.id === id && (version === undefined || r.version === version));

type Schema = { properties?: Record<string, Schema>; items?: Schema; examples?: unknown[] };

/** Follows a JSON Pointer through a schema's properties (and array items for numeric tokens). */
function schemaAt(schema: Schema, pointer: string): Schema | undefined {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<Schema | undefined>((node, token) => (/^[0-9]+$/.test(token) ? node?.items : node?.properties?.[token]), schema);
}

const modelSchema = (ref: string): Schema => {
  const { id, version } = parseRecordRef(ref);
  const model = find('model', id, version);
  expect(model, ref).toBeDefined();
  return (model as RecordVersion).body.schema as Schema;
};

describe('seedRegister', () => {
  it('is deterministic and plain JSON data', () => {
    // seedRegister keeps its first build: a second build, made afresh, must equal it.
    expect(buildSampleRegister()).toEqual(seed);
    expect(seedRegister()).toBe(seed);
    expect(JSON.parse(JSON.stringify(seed))).toEqual(seed);
  });

  it('holds every kind, with fixed unique keys and intact supersession chains', () => {
    for (const kind of ['item', 'model', 'service', 'cross_register_mapping', 'protocol_binding', 'verification_mechanism', 'generic'] as const) {
      expect(byKind(kind).length, kind).toBeGreaterThanOrEqual(2);
    }
    const keys = seed.map((r) => `${r.kind}/${r.id}@${r.version}`);
    expect(new Set(keys).size).toBe(keys.length);
    const records = new Map<string, RecordVersion[]>();
    for (const r of seed) records.set(`${r.kind}/${r.id}`, [...(records.get(`${r.kind}/${r.id}`) ?? []), r]);
    for (const versions of records.values()) expect(supersessionChain(versions).current).toBe(versions.length);
    expect(supersessionChain(seed.filter((r) => r.kind === 'item' && r.id === 'battery.lmt')).current).toBe(2);
  });

  describe('models', () => {
    // A stock validator configured here, independent of the registry's compile path.
    const ajv = () => {
      const instance = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
      ajvFormats.default(instance);
      return instance;
    };

    it.each(byKind('model').map((m) => [m.id, m] as const))('%s compiles in strict mode and its examples validate', (_, model) => {
      const schema = model.body.schema as Schema;
      const validate = ajv().compile(schema);
      expect(schema.examples?.length).toBeGreaterThanOrEqual(1);
      for (const example of schema.examples ?? []) expect(validate(example), JSON.stringify(validate.errors)).toBe(true);
    });

    it('describes the battery passport contents of Regulation (EU) 2023/1542 Annex XIII', () => {
      const fields = Object.keys(modelSchema('battery-passport@1').properties ?? {});
      for (const field of [
        'manufacturer',
        'manufacturing_place',
        'manufacturing_date',
        'battery_category',
        'battery_status',
        'weight_kg',
        'chemistry',
        'hazardous_substances',
        'critical_raw_materials',
        'carbon_footprint',
        'recycled_content',
        'renewable_content_pct',
        'rated_capacity_ah',
        'voltage',
        'power_capability',
        'expected_lifetime',
        'capacity_threshold_for_exhaustion_pct',
        'temperature_range_idle_c',
        'commercial_warranty_years',
        'round_trip_efficiency',
        'internal_resistance',
        'state_of_health',
        'due_diligence_report_url',
      ]) {
        expect(fields, field).toContain(field);
      }
    });

    it('refuses battery documents that break the regulation-derived constraints', () => {
      const schema = modelSchema('battery-passport@1');
      const validate = ajv().compile(schema);
      const example = structuredClone(schema.examples?.[0]) as Record<string, unknown>;
      const broken = {
        ...example,
        weight_kg: 0,
        battery_category: 'car',
        manufacturing_date: '2027-13',
        recycled_content: { cobalt_pct: 101 },
      };
      expect(validate(broken)).toBe(false);
      expect(validate.errors?.map((e) => `${e.instancePath} ${e.keyword}`).sort()).toEqual(
        ['/battery_category enum', '/manufacturing_date pattern', '/recycled_content/cobalt_pct maximum', '/weight_kg exclusiveMinimum'].sort(),
      );
    });

    it('describes textile fibre composition, manufacturing countries, care and substances of concern', () => {
      const fields = Object.keys(modelSchema('textile-product@1').properties ?? {});
      for (const field of ['fibre_composition', 'countries_of_manufacture', 'care_instructions', 'recycled_content_pct', 'substances_of_concern']) {
        expect(fields).toContain(field);
      }
    });
  });

  it('has profiles that are valid manifests naming seeded models, claims, bindings and mechanisms', () => {
    const profiles = byKind('generic');
    expect(profiles.length).toBeGreaterThanOrEqual(2);
    for (const profile of profiles) {
      expect(checkProfileManifest(profile.body).valid).toBe(true);
      const schema = modelSchema(profile.body.model as string);
      for (const pointer of [...(profile.body.required_claims as string[]), ...((profile.body.pack_claims as string[] | undefined) ?? [])]) {
        expect(schemaAt(schema, pointer), `${profile.id} ${pointer}`).toBeDefined();
      }
      for (const id of profile.body.protocol_bindings as string[]) expect(find('protocol_binding', id), id).toBeDefined();
      for (const id of profile.body.verification_mechanisms as string[]) expect(find('verification_mechanism', id), id).toBeDefined();
    }
  });

  it('has cross-register mappings whose sources are fields of the mapped model, with SKOS relations', () => {
    const relations = new Set(['exactMatch', 'closeMatch', 'broadMatch', 'narrowMatch', 'relatedMatch']);
    for (const mapping of byKind('cross_register_mapping')) {
      const schema = modelSchema((mapping.body.source as { model: string }).model);
      for (const entry of mapping.body.mappings as { source: string; relation: string }[]) {
        expect(schemaAt(schema, entry.source), `${mapping.id} ${entry.source}`).toBeDefined();
        expect(relations.has(entry.relation), entry.relation).toBe(true);
      }
    }
  });

  it('has services and items that reference only seeded records', () => {
    for (const service of byKind('service')) {
      for (const id of service.body.protocol_bindings as string[]) expect(find('protocol_binding', id)).toBeDefined();
      for (const id of service.body.verification_mechanisms as string[]) expect(find('verification_mechanism', id)).toBeDefined();
    }
    for (const item of byKind('item')) {
      if (item.body.broader !== null) expect(find('item', item.body.broader as string), item.id).toBeDefined();
    }
  });

  it('answers applicability around the battery passport start date, 18 February 2027', () => {
    const query = (at: string) => applicableAt(seed, { productCategory: 'battery.ev', jurisdiction: 'FR', at }).map((a) => a.ref);
    expect(query('2027-02-17T23:59:59.999Z')).toEqual([]);
    expect(query('2027-02-18T00:00:00.000Z')).toEqual(['battery-passport@1', 'eu-battery-passport@1']);
  });
});
