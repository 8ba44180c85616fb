/**
 * Models, validation, the profile manifest schema, applicability and the sample register, end to
 * end through the REST facade and the graph.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILE_MANIFEST_EXAMPLES, textileProductSchema } from '../../subgraphs/registry/domain/index.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack } from '../support/stack.js';

let platform: TestStack;
beforeAll(async () => {
  platform = await startTestStack();
});
afterAll(() => platform?.stop());

const rest = (path: string, init?: Parameters<TestStack['rest']>[2]) => platform.rest('registry', path, init);
const create = (kind: string, id: string, body: unknown, extra: Record<string, unknown> = {}) => rest('/', { body: { kind, id, body, ...extra }, as: 'writer' });
const validate = (model: string, document: unknown, query = '') => rest(`/models/${model}/validate${query}`, { body: JSON.stringify(document), as: 'writer' });
const seed = () => rest('/admin/seed', { method: 'POST', as: 'admin' });

/** A stock validator configured on its own: ajv's defaults, every error, the standard formats. */
function stockValidator(schema: object) {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  ajvFormats.default(ajv);
  return ajv.compile(schema);
}

const located = (errors: readonly { pointer?: string; instancePath?: string; keyword: string }[]) => errors.map((error) => `${error.pointer ?? error.instancePath} ${error.keyword}`).sort();

const product = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['id', 'weight_kg', 'tags'],
  properties: {
    id: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' },
    weight_kg: { type: 'number', exclusiveMinimum: 0 },
    tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, maxItems: 3 },
    made: { type: 'string', format: 'date' },
    'a/b': { type: 'integer' },
  },
  additionalProperties: false,
  examples: [{ id: 'ABC-1', weight_kg: 1, tags: [] }],
};

describe('the sample register', () => {
  it('keeps a record the register already holds and reports it, then loads the rest', async () => {
    // A writer got there first with an item the sample register also has.
    expect((await create('item', 'textile', { label: 'Our own textiles' })).status).toBe(201);
    const first = await seed();
    expect(first.status).toBe(200);
    expect(first.body.skipped).toEqual([{ kind: 'item', id: 'textile', reason: expect.stringContaining('differs') }]);
    expect(first.body.versions_inserted).toBeGreaterThanOrEqual(19);
    expect((await rest('/items/textile')).body.body).toEqual({ label: 'Our own textiles' });
  });

  it('is idempotent: a second load stores nothing', async () => {
    const { rows: before } = await sql(platform.databaseUrl, 'SELECT count(*)::int AS n FROM registry.record_version');
    const again = await seed();
    expect(again.status).toBe(200);
    expect(again.body.versions_inserted).toBe(0);
    expect(again.body.versions_present).toBe(before[0]!.n - 1);
    const { rows: after } = await sql(platform.databaseUrl, 'SELECT count(*)::int AS n FROM registry.record_version');
    expect(after[0]!.n).toBe(before[0]!.n);
    const log = await rest('/admin/log?limit=2', { as: 'admin' });
    expect(log.body.entries.map((entry: { action: string; outcome: string }) => `${entry.action} ${entry.outcome}`)).toEqual(['seedRegistry ok', 'seedRegistry ok']);
  });

  it('holds the models, bindings, mechanisms, mappings and services it promises', async () => {
    const ids = async (collection: string) => (await rest(`/${collection}?limit=500`)).body.records.map((record: { id: string }) => record.id);
    expect(await ids('models')).toEqual(['battery-passport', 'textile-product']);
    expect(await ids('protocol-bindings')).toEqual(['graphql-over-http', 'rest-http-json']);
    expect(await ids('verification-mechanisms')).toEqual(['ed25519-jws-jcs', 'es256-cose-sign1']);
    expect((await ids('cross-register-mappings')).length).toBeGreaterThanOrEqual(3);
    expect((await ids('services')).length).toBeGreaterThanOrEqual(2);
    const battery = (await rest('/models/battery-passport')).body.body.schema;
    for (const field of ['battery_identifier', 'manufacturer', 'manufacturing_date', 'weight_kg', 'chemistry', 'carbon_footprint', 'recycled_content', 'state_of_health']) {
      expect(battery.properties, field).toHaveProperty(field);
    }
    expect((await rest('/eu-battery-passport')).body.body).toMatchObject({ type: 'ProfileManifest', model: 'battery-passport@1' });
  });
});

describe('models', () => {
  it('are JSON Schemas 2020-12, checked when stored', async () => {
    const good = await create('model', 'product', { title: 'Product', schema: product, applicability: { product_categories: ['widget'], jurisdictions: ['DE'] } });
    expect(good.status).toBe(201);
    const refused: [string, unknown][] = [
      ['bad-type', { type: 'object', properties: { a: { type: 'strng' } } }],
      ['unknown-keyword', { type: 'object', colour: 'red' }],
      ['unknown-format', { type: 'string', format: 'colour' }],
      ['old-dialect', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }],
      ['dangling-ref', { $ref: '#/$defs/missing' }],
      ['bad-example', { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], examples: [{}] }],
      ['not-a-schema', [1, 2]],
    ];
    for (const [id, schema] of refused) {
      const response = await create('model', id, { title: id, schema });
      expect(response.status, `${id}: ${response.text}`).toBe(422);
      expect(['INVALID_SCHEMA', 'INVALID_RECORD']).toContain(response.body.code);
      expect((await rest(`/models/${id}`)).status).toBe(404);
    }
    const metaSchema = await create('model', 'bad-type', { title: 'x', schema: { type: 'object', properties: { a: { type: 'strng' } } } });
    expect(metaSchema.body.errors.some((error: { pointer: string }) => error.pointer.startsWith('/schema/properties/a/type'))).toBe(true);
    const example = await create('model', 'bad-example', { title: 'x', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], examples: [{}] } });
    expect(example.body.errors[0]).toMatchObject({ pointer: '/schema/examples/0', keyword: 'required' });
  });

  it('validate documents with every error and its JSON Pointer, as a stock validator finds them', async () => {
    const documents: unknown[] = [
      { id: 'ABC-1', weight_kg: 0.5, tags: ['a'], made: '2024-02-29' },
      {},
      { id: 'abc', weight_kg: 0, tags: ['a', 'a', 'b', 'c'], made: '2023-02-29', 'a/b': 1.5, extra: true },
      { id: 7, weight_kg: '1', tags: 'a' },
      42,
      [],
      null,
    ];
    const stock = stockValidator(product);
    for (const document of documents) {
      const response = await validate('product', document);
      expect(response.status).toBe(200);
      const valid = stock(document);
      expect(response.body.valid, JSON.stringify(document)).toBe(valid);
      expect(located(response.body.errors)).toEqual(located(stock.errors ?? []));
      expect(response.body.model).toBe('product@1');
    }
    // Reasoned from the specifications, not read back: RFC 6901 escapes "/" as "~1".
    const broken = await validate('product', documents[2]);
    expect(located(broken.body.errors)).toEqual([' additionalProperties', '/a~1b type', '/id pattern', '/made format', '/tags maxItems', '/tags uniqueItems', '/weight_kg exclusiveMinimum'].sort());
    expect(broken.body.errors.every((error: { message: string }) => error.message.length > 0)).toBe(true);
    expect(broken.body.errors.find((error: { keyword: string }) => error.keyword === 'additionalProperties').params).toEqual({ additionalProperty: 'extra' });
  });

  it("validate the seeded models' own examples and catch broken copies", async () => {
    const example = (textileProductSchema.examples as object[])[0]!;
    expect((await validate('textile-product', example)).body).toEqual({ valid: true, model: 'textile-product@1', errors: [] });
    const broken = { ...example, gtin: '123', fibre_composition: [{ fibre: 'cotton', percentage: 120 }], care_instructions: { washing: '45' } };
    const response = await validate('textile-product', broken);
    const stock = stockValidator(textileProductSchema);
    expect(stock(broken)).toBe(false);
    expect(located(response.body.errors)).toEqual(located(stock.errors!));
    expect(located(response.body.errors)).toEqual(expect.arrayContaining(['/gtin pattern', '/fibre_composition/0/percentage maximum', '/care_instructions/washing enum']));
  });

  it('answer validation for a given version, 404 for unknown models and versions', async () => {
    expect((await validate('product', {}, '?version=1')).body.model).toBe('product@1');
    expect((await validate('product', {}, '?version=2')).status).toBe(404);
    expect((await validate('nothing', {})).status).toBe(404);
    expect((await validate('eu-battery-passport', {})).status).toBe(404);
    expect((await rest('/models/product/validate', { body: '{not json', as: 'writer' })).status).toBe(400);
  });

  it('are served to the graph: registryModel and registryValidateDocument', async () => {
    const model = await platform.graphql('{ registryModel(id: "textile-product", version: 1) { id version kind body } notModel: registryModel(id: "battery") { id } }');
    expect(model.data.registryModel).toMatchObject({ id: 'textile-product', version: 1, kind: 'model' });
    expect(model.data.notModel).toBeNull();
    const result = await platform.graphql('query($d: JSON!) { registryValidateDocument(modelId: "product", document: $d) }', { d: { id: 'ABC-1' } });
    expect(result.data.registryValidateDocument).toMatchObject({ valid: false, model: 'product@1' });
    expect(located(result.data.registryValidateDocument.errors)).toEqual([' required', ' required']);
  });
});

describe('the profile manifest schema', () => {
  it("compiles in a stock validator's strict mode, and its examples validate against it", async () => {
    const response = await rest('/schemas/profile-manifest');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/schema+json');
    const schema = response.body;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(`${platform.base('registry')}/schemas/profile-manifest`);
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajvFormats.default(ajv);
    const check = ajv.compile(schema);
    expect(schema.examples.length).toBeGreaterThan(0);
    for (const example of schema.examples) expect(check(example), JSON.stringify(check.errors)).toBe(true);
    expect(check({ ...schema.examples[0], model: 'no-version' })).toBe(false);
  });
});

describe('applicability', () => {
  const answer = async (query: string) => {
    const response = await rest(`/applicability?${query}`);
    expect(response.status, response.text).toBe(200);
    return { models: response.body.models.map((m: { ref: string }) => m.ref), profiles: response.body.profiles.map((p: { ref: string }) => p.ref), body: response.body };
  };

  it('answers from the versions effective at the date', async () => {
    expect(await answer('product_category=battery.ev&jurisdiction=DE&at=2027-02-17T23:59:59Z')).toMatchObject({ models: [], profiles: [] });
    expect(await answer('product_category=battery.ev&jurisdiction=DE&at=2027-02-18')).toMatchObject({ models: ['battery-passport@1'], profiles: ['eu-battery-passport@1'] });
    expect(await answer('product_category=battery&jurisdiction=DE&at=2028-01-01')).toMatchObject({ models: [] });
    expect(await answer('product_category=battery.ev&jurisdiction=US&at=2028-01-01')).toMatchObject({ models: [], profiles: [] });
    expect(await answer('product_category=textile.apparel&jurisdiction=FR&at=2029-12-31T23:59:59Z')).toMatchObject({ profiles: ['eu-textile-apparel@1'] });
    expect(await answer('product_category=textile.apparel&jurisdiction=FR&at=2030-01-01T00:00:00Z')).toMatchObject({ profiles: [] });
    const full = (await answer('product_category=battery.ev&jurisdiction=de&at=2027-03-01')).body;
    expect(full).toMatchObject({ at: '2027-03-01T00:00:00.000Z', product_category: 'battery.ev', jurisdiction: 'DE' });
    expect(full.profiles[0]).toMatchObject({ id: 'eu-battery-passport', version: 1, model: 'battery-passport@1', effective_from: '2027-02-18T00:00:00.000Z', effective_to: null });
  });

  it('changes answer where a new version takes over, on both sides of its date', async () => {
    const v1 = {
      ...PROFILE_MANIFEST_EXAMPLES[1],
      profile_id: 'acme-widget',
      model: 'product@1',
      product_categories: ['widget'],
      jurisdictions: ['EU'],
      effective_from: '2030-01-01T00:00:00Z',
      effective_to: undefined,
    };
    delete (v1 as { effective_to?: string }).effective_to;
    expect((await create('generic', 'acme-widget', v1)).status).toBe(201);
    const v2 = { ...v1, version: '2.0.0', jurisdictions: ['FR'], effective_from: '2032-01-01T00:00:00Z' };
    const added = await rest('/acme-widget/versions', { body: { expected_version: 1, body: v2 }, as: 'writer' });
    expect(added.status, added.text).toBe(201);
    expect(added.body).toMatchObject({ version: 2, effective_from: '2032-01-01T00:00:00.000Z' });

    expect((await answer('product_category=widget&jurisdiction=DE&at=2029-12-31')).profiles).toEqual([]);
    expect((await answer('product_category=widget&jurisdiction=DE&at=2031-12-31T23:59:59Z')).profiles).toEqual(['acme-widget@1']);
    expect((await answer('product_category=widget&jurisdiction=FR&at=2031-12-31T23:59:59Z')).profiles).toEqual(['acme-widget@1']);
    // From 2032 version 2 holds, and it covers France only.
    expect((await answer('product_category=widget&jurisdiction=DE&at=2032-01-01')).profiles).toEqual([]);
    expect((await answer('product_category=widget&jurisdiction=FR&at=2032-01-01')).profiles).toEqual(['acme-widget@2']);
    expect((await answer('product_category=widget.blue&jurisdiction=FR&at=2033-01-01')).profiles).toEqual(['acme-widget@2']);
    // The model the profile names applies in Germany only, whatever the date.
    expect((await answer('product_category=widget&jurisdiction=DE&at=2031-01-01')).models).toEqual(['product@1']);
  });

  it('refuses profiles naming records the registry does not hold', async () => {
    const profile = { ...PROFILE_MANIFEST_EXAMPLES[1], profile_id: 'dangling', model: 'ghost@1' };
    const response = await create('generic', 'dangling', profile);
    expect(response.status).toBe(422);
    expect(response.body.detail).toContain('ghost@1');
    const wrongKind = await create('generic', 'dangling', { ...profile, model: 'product@1', protocol_bindings: ['ed25519-jws-jcs'] });
    expect(wrongKind.status).toBe(422);
    expect(wrongKind.body.detail).toContain('ed25519-jws-jcs is not a stored protocol binding');
  });

  it('refuses malformed questions with 400', async () => {
    for (const query of ['at=tomorrow', 'at=2027-02-30', 'jurisdiction=Germany', 'product_category=Bad%20Cat', 'colour=red']) {
      const response = await rest(`/applicability?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.code).toBe('INVALID_QUERY');
    }
  });
});
