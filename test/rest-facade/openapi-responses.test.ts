/**
 * Every answer matches the served OpenAPI documents: every path of every service is called for real
 * against a whole stack (seeded through the REST API), and each answer's body, success or problem,
 * is validated with Ajv (JSON Schema 2020-12) against the schema the service's own document gives
 * for that status and media type. A status the document does not list fails; so does an operation
 * never reached, and the list of those is printed.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceName } from '../../lib/config/services.js';
import { appendEvent, createModel, createPassport, PAYLOADS } from '../issuer/support.js';
import { sql } from '../support/database.js';
import { startTestStack, type TestStack, type TOKENS } from '../support/stack.js';
import { compactCredential, cosign, DAY, fromNow, newKey, seconds } from '../trust/support.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const SERVICES: ServiceName[] = ['trust', 'registry', 'issuer', 'archive'];

type Json = Record<string, any>;
type OpenApi = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Json; example?: unknown }>; headers?: Record<string, { schema: Json }> }> }>>;
  components?: { schemas?: Record<string, Json> };
};

let platform: TestStack;
const documents = {} as Record<ServiceName, OpenApi>;
const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }));
// OpenAPI 3.1's own keyword beside JSON Schema's.
ajv.addVocabulary(['example']);
/**
 * Validators by the text of the schema they check, its references inlined: the documents repeat
 * schemas (every problem answer's, a resource in each of its answers), and compiling one costs Ajv
 * far more than its text.
 */
const validators = new Map<string, ValidateFunction>();
function validatorOf(schema: Json, document: OpenApi): ValidateFunction {
  const text = JSON.stringify(resolved(schema, document));
  let validate = validators.get(text);
  if (!validate) {
    validate = ajv.compile(JSON.parse(text) as Json);
    validators.set(text, validate);
  }
  return validate;
}

/** Operation `METHOD /path` → the statuses it answered. */
const reached = new Map<string, Set<number>>();
const failures: string[] = [];

/** A schema with the document's `#/components/schemas/…` references inlined, so Ajv can compile it alone. */
function resolved(schema: unknown, document: OpenApi): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolved(item, document));
  if (schema === null || typeof schema !== 'object') return schema;
  const { $ref, ...rest } = schema as Json;
  if (typeof $ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec($ref)?.[1];
    const target = name && document.components?.schemas?.[name];
    if (!target) throw new Error(`unresolvable $ref ${$ref}`);
    return resolved({ ...target, ...rest }, document);
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, resolved(value, document)]));
}

interface Call {
  method?: string;
  body?: unknown;
  as?: keyof typeof TOKENS;
  headers?: Record<string, string>;
}

/**
 * One request to `path` (concrete) of the operation `template`; its answer is checked against the
 * document and returned.
 */
async function call(service: ServiceName, template: string, path: string, init: Call = {}) {
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  const response = await platform.rest(service, path, { ...init, method });
  const operation = `${service} ${method} ${template}`;
  reached.set(operation, (reached.get(operation) ?? new Set()).add(response.status));
  // A method the path does not take is refused as each of its operations documents (405 with Allow).
  const operations = documents[service].paths[template] ?? {};
  const declared = operations[method.toLowerCase()] ?? (response.status === 405 ? Object.values(operations)[0] : undefined);
  if (!declared) throw new Error(`${operation} is not in the ${service} document`);
  const answer = declared.responses[String(response.status)];
  if (!answer) {
    failures.push(`${operation} answered ${response.status}, which its document does not list: ${response.text.slice(0, 300)}`);
    return response;
  }
  // A creation names what it made (docs/REST.md), except the admin settings, which have no address to read, and a batch of passports, which has many.
  if (response.status === 201 && !answer.headers?.Location && !/^\/admin\/(profiles|applicability)$|^\/passports\/batch$/.test(template)) failures.push(`${operation} 201: no Location documented`);
  if (response.status !== 201 && response.headers.get('location')) failures.push(`${operation} answered ${response.status} with a Location`);
  checkHeaders(operation, response.status, answer, response.headers);
  if (!answer.content) {
    if (response.text !== '') failures.push(`${operation} ${response.status}: a body where the document has none`);
    return response;
  }
  const { mediaType, content } = documentedContent(operation, response.status, answer, response.headers);
  if (!content) return response;
  if (mediaType === 'application/x-tar') return response;
  const key = `${operation} ${response.status} ${mediaType}`;
  const validate = validatorOf(content.schema, documents[service]);
  // A vc+jwt is text; every other answer is JSON.
  const body = mediaType === 'application/vc+jwt' ? response.text : response.body;
  if (!validate(body)) {
    failures.push(`${key}: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n  body: ${response.text.slice(0, 500)}`);
  }
  if (process.env.OPENAPI_DUMP) dump.push({ key, body });
  return response;
}
const dump: { key: string; body: unknown }[] = [];

type DocumentedAnswer = { headers?: Record<string, { schema: Json }>; content?: Record<string, { schema: Json }> };

/** Every header the document promises for this status is there, and matches its schema. */
function checkHeaders(operation: string, status: number, answer: DocumentedAnswer, headers: Headers): void {
  for (const [name, { schema }] of Object.entries(answer.headers ?? {})) {
    const value = headers.get(name);
    const validate = ajv.compile(schema);
    if (value === null) failures.push(`${operation} ${status}: no ${name} header, which the document promises`);
    else if (!validate(value)) failures.push(`${operation} ${status}: ${name}: ${value}: ${ajv.errorsText(validate.errors)}`);
  }
}

/** The answer's media type and the document's content for it; a failure noted when the document has none. */
function documentedContent(operation: string, status: number, answer: DocumentedAnswer, headers: Headers): { mediaType: string; content?: { schema: Json } } {
  const mediaType = (headers.get('content-type') ?? '').split(';')[0]!.trim();
  const content = answer.content?.[mediaType];
  if (!content) failures.push(`${operation} ${status}: media type ${mediaType} not in ${Object.keys(answer.content ?? {}).join(', ')}`);
  return { mediaType, ...(content && { content }) };
}

/**
 * A GET of a Server-Sent Events stream (`template`): recorded as reached, its status, headers and
 * media type checked against the document as call() checks them, the text up to its first event
 * checked against the document's schema and returned; then the stream is left.
 */
async function openStream(service: ServiceName, template: string, path: string): Promise<string> {
  const operation = `${service} GET ${template}`;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15_000);
  try {
    const response = await fetch(`${platform.base(service)}${path}`, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    reached.set(operation, (reached.get(operation) ?? new Set()).add(response.status));
    const answer = documents[service].paths[template]?.get?.responses[String(response.status)];
    if (!answer) {
      failures.push(`${operation} answered ${response.status}, which its document does not list`);
      return '';
    }
    checkHeaders(operation, response.status, answer, response.headers);
    const { mediaType, content } = documentedContent(operation, response.status, answer, response.headers);
    if (!content) return '';
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (/\ndata: [^\n]*\n\n/.test(text)) break;
    }
    const validate = validatorOf(content.schema, documents[service]);
    if (!validate(text)) failures.push(`${operation} ${response.status} ${mediaType}: ${ajv.errorsText(validate.errors, { separator: '; ' })}`);
    return text;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

beforeAll(async () => {
  platform = await startTestStack();
  for (const service of SERVICES) {
    const response = await fetch(`${new URL(platform.base(service)).origin}/docs/${service}/openapi.json`);
    expect(response.status).toBe(200);
    documents[service] = (await response.json()) as OpenApi;
  }
}, 120_000);
afterAll(async () => {
  if (process.env.OPENAPI_DUMP) (await import('node:fs')).writeFileSync(process.env.OPENAPI_DUMP, JSON.stringify(dump, null, 1));
  await platform?.stop();
});

/** Keywords that give an object schema its shape (or say deliberately that any members go). */
const SHAPING = ['properties', 'patternProperties', 'additionalProperties', 'oneOf', 'anyOf', 'allOf', '$ref', 'const', 'enum'];

/**
 * Every place in a schema that says nothing about its value: `{}`, a bare `{"type":"object"}`, an
 * object open to any members without a description saying what goes in it.
 */
function vaguePlaces(schema: unknown, where: string, found: string[]): string[] {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) vaguePlaces(item, `${where}/${index}`, found);
    return found;
  }
  if (schema === null || typeof schema !== 'object') return found;
  const node = schema as Json;
  const meaningful = Object.keys(node).filter((key) => !['description', 'title', 'example', 'examples', 'default'].includes(key));
  const types = [node.type].flat();
  if (meaningful.length === 0) found.push(`${where}: an empty schema`);
  else if (types.includes('object') && !SHAPING.some((key) => key in node)) found.push(`${where}: a bare object`);
  else if (node.additionalProperties === true && !node.properties && !node.description) found.push(`${where}: an open object without a description`);
  for (const key of ['properties', 'patternProperties', '$defs']) {
    for (const [name, member] of Object.entries((node[key] ?? {}) as Json)) vaguePlaces(member, `${where}/${key}/${name}`, found);
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames']) {
    if (typeof node[key] === 'object') vaguePlaces(node[key], `${where}/${key}`, found);
  }
  for (const key of ['oneOf', 'anyOf', 'allOf', 'prefixItems']) if (Array.isArray(node[key])) vaguePlaces(node[key], `${where}/${key}`, found);
  return found;
}

describe('the served OpenAPI documents', () => {
  it('have no schema that says nothing: every request and response body, parameter and shared schema is shaped', () => {
    const vague: string[] = [];
    for (const service of SERVICES) {
      const document = documents[service];
      for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) vaguePlaces(schema, `${service} #/components/schemas/${name}`, vague);
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations) as [string, Json][]) {
          const where = `${service} ${method.toUpperCase()} ${path}`;
          for (const parameter of operation.parameters ?? []) vaguePlaces(parameter.schema, `${where} parameter ${parameter.name}`, vague);
          for (const [mediaType, content] of Object.entries((operation.requestBody?.content ?? {}) as Json)) vaguePlaces(content.schema, `${where} request ${mediaType}`, vague);
          for (const [status, answer] of Object.entries(operation.responses as Json)) {
            for (const [mediaType, content] of Object.entries((answer.content ?? {}) as Json)) vaguePlaces(content.schema, `${where} ${status} ${mediaType}`, vague);
          }
        }
      }
    }
    expect(vague).toEqual([]);
  });

  it('give every response with a body, success or problem, an example that matches its schema', () => {
    const wrong: string[] = [];
    let examples = 0;
    for (const service of SERVICES) {
      for (const [path, operations] of Object.entries(documents[service].paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const [status, answer] of Object.entries(operation.responses)) {
            for (const [mediaType, content] of Object.entries(answer.content ?? {})) {
              const where = `${service} ${method.toUpperCase()} ${path} ${status} ${mediaType}`;
              // Archive bytes (a tar) have no JSON example to give.
              if (mediaType === 'application/x-tar') continue;
              if (content.example === undefined) {
                wrong.push(`${where}: no example`);
                continue;
              }
              examples += 1;
              const validate = validatorOf(content.schema, documents[service]);
              if (!validate(content.example)) wrong.push(`${where}: its example does not match its schema: ${ajv.errorsText(validate.errors)}`);
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(examples).toBeGreaterThan(300);
  });
});

describe('real answers of every path', () => {
  it('match the documents: trust', async () => {
    const t = (template: string, path = template, init: Call = {}) => call('trust', template, path, init);
    const iat = seconds(new Date(Date.now() - 30 * DAY));
    const [rootKey, issuerKey, witness] = await Promise.all([newKey(), newKey('P-256'), newKey()]);
    expect((await t('/nodes', '/nodes', { body: { id: 'oa-root', kind: 'root', keys: [{ ...rootKey.jwk, iat }] }, as: 'admin' })).status).toBe(201);
    expect((await t('/nodes', '/nodes', { body: { id: 'oa-acme', kind: 'issuer', jurisdiction: 'DE', keys: [{ ...issuerKey.jwk, iat }] }, as: 'admin' })).status).toBe(201);
    expect((await t('/nodes', '/nodes', { body: { id: 'oa-acme', keys: [{ ...issuerKey.jwk, iat }] }, as: 'admin' })).status).toBe(200);
    expect((await t('/nodes', '/nodes', { body: { id: 'oa-acme', kind: 'root' }, as: 'admin' })).status).toBe(409);
    await t('/nodes', '/nodes', { body: { id: 'bad id', kind: 'issuer' }, as: 'admin' });
    const credential = await compactCredential({ iss: 'oa-root', sub: 'oa-acme', scope: { jurisdictions: ['DE'] }, iat: fromNow(-3_600_000), exp: fromNow(365 * DAY) }, rootKey);
    expect((await t('/edges', '/edges', { body: { credential }, as: 'admin' })).status).toBe(201);
    expect((await t('/edges', '/edges', { body: JSON.stringify(credential), as: 'admin' })).status).toBe(200);
    expect((await t('/edges', '/edges', { body: { credential: 'not.a.jws' }, as: 'admin' })).status).toBe(422);
    await t('/graph');
    expect((await t('/trust-lists', '/trust-lists', { body: { jurisdiction: 'DE', framework: 'eIDAS' }, as: 'admin' })).status).toBe(201);
    expect((await t('/trust-lists', '/trust-lists', { body: { jurisdiction: 'DE', framework: 'eIDAS' }, as: 'admin' })).status).toBe(409);
    const entry = { id: 'oa-acme-entry', service_type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', name: 'Acme', node_id: 'oa-acme' };
    expect((await t('/trust-lists/{jur}/entries', '/trust-lists/DE/entries', { body: entry, as: 'admin' })).status).toBe(201);
    expect((await t('/trust-lists/{jur}/entries', '/trust-lists/DE/entries', { body: { id: 'oa-acme-entry', name: 'Acme GmbH' }, as: 'admin' })).status).toBe(200);
    await t('/trust-lists/{jur}/entries', '/trust-lists/DE/entries', { body: { id: 'oa-acme-entry', superseded_at: fromNow(-1000) }, as: 'admin' });
    await t('/trust-lists/{jur}/entries', '/trust-lists/FR/entries', { body: entry, as: 'admin' });
    await t('/trust-lists');
    await t('/trust-lists', `/trust-lists?jurisdiction=DE&at=${encodeURIComponent(fromNow(0))}`);
    expect((await t('/trust-lists/{jur}', '/trust-lists/de')).status).toBe(200);
    expect((await t('/trust-lists/{jur}', '/trust-lists/XX')).status).toBe(404);
    expect((await t('/master-list')).status).toBe(200);
    expect((await t('/master-list/witnesses', '/master-list/witnesses', { body: { m: 1, keys: [witness.jwk] }, as: 'admin' })).status).toBe(200);
    expect((await t('/master-list/witnesses', '/master-list/witnesses', { body: { m: 2, keys: [witness.jwk] }, as: 'admin' })).status).toBe(422);
    const origin = (await t('/master-list')).body.origin;
    const subject = { id: 'oa-de-root', body: { jurisdiction: 'DE', root: 'oa-root', keys: ['oa-root-key'] } };
    expect((await t('/master-list/entries', '/master-list/entries', { body: { ...subject, cosignatures: [cosign(witness, origin, subject)] }, as: 'admin' })).status).toBe(201);
    expect((await t('/master-list/entries', '/master-list/entries', { body: { id: 'oa-unsigned', body: { root: 'x' } }, as: 'admin' })).status).toBe(201);
    expect((await t('/master-list/entries', '/master-list/entries', { body: { id: 'oa-unsigned', body: { root: 'y' } }, as: 'admin' })).status).toBe(200);
    await t('/master-list');
    expect((await t('/revocations', '/revocations', { body: { subject: `oa-acme#${issuerKey.jwk.kid}`, reason: 'superseded' }, as: 'admin' })).status).toBe(201);
    expect((await t('/revocations', '/revocations', { body: { subject: 'oa-root', reason: 'keyCompromise', effective_at: fromNow(-DAY) }, as: 'admin' })).status).toBe(422);
    await t('/revocations');
    await t('/revocations', '/revocations?subject=oa-acme&retroactive=false');
    await t('/revocations', '/revocations?window=nonsense');
    const graph = await t('/graph');
    expect((await t('/graph', '/graph', { headers: { 'if-none-match': graph.headers.get('etag')! } })).status).toBe(304);
    await t('/anchor-bundle');
    await t('/anchor-bundle', '/anchor-bundle?jurisdiction=DE');
    expect((await t('/keys/{kid}/path', `/keys/${issuerKey.jwk.kid}/path`)).status).toBe(200);
    expect((await t('/keys/{kid}/path', '/keys/not-a-kid/path')).status).toBe(400);
  });

  it('match the documents: registry', async () => {
    const r = (template: string, path = template, init: Call = {}) => call('registry', template, path, init);
    const collections: [kind: string, collection: string, versioned: boolean][] = [
      ['item', 'items', true],
      ['model', 'models', false],
      ['service', 'services', true],
      ['cross_register_mapping', 'cross-register-mappings', true],
      ['protocol_binding', 'protocol-bindings', false],
      ['verification_mechanism', 'verification-mechanisms', false],
    ];
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', required: ['chemistry'], properties: { chemistry: { enum: ['LFP', 'NMC'] } } };
    for (const [kind, collection, versioned] of collections) {
      for (const n of [1, 2, 3]) {
        const body = kind === 'model' ? { title: `OA ${n}`, schema, applicability: { product_categories: ['battery.ev'], jurisdictions: ['DE'] } } : { title: `OA ${kind} ${n}` };
        expect((await r('/', '/', { body: { kind, id: `oa-${collection}-${n}`, body, status: n === 3 ? 'draft' : undefined }, as: 'writer' })).status).toBe(201);
      }
      expect((await r(`/${collection}`, `/${collection}?limit=2`)).status).toBe(200);
      const page = await r(`/${collection}`, `/${collection}?limit=2&status=active`);
      if (page.body.next_cursor) await r(`/${collection}`, `/${collection}?cursor=${encodeURIComponent(page.body.next_cursor)}`);
      await r(`/${collection}`, `/${collection}?limit=0`);
      expect((await r(`/${collection}/{id}`, `/${collection}/oa-${collection}-1`)).status).toBe(200);
      const etag = (await r(`/${collection}/{id}`, `/${collection}/oa-${collection}-1`)).headers.get('etag')!;
      expect((await r(`/${collection}/{id}`, `/${collection}/oa-${collection}-1`, { headers: { 'if-none-match': etag } })).status).toBe(304);
      expect((await r(`/${collection}/{id}`, `/${collection}/no-such`)).status).toBe(404);
      if (!versioned) continue;
      expect(
        (await r(`/${collection}/{id}/versions`, `/${collection}/oa-${collection}-1/versions`, { body: { expected_version: 1, body: { title: 'v2' }, effective_from: fromNow(-DAY) }, as: 'writer' }))
          .status,
      ).toBe(201);
      expect((await r(`/${collection}/{id}/versions`, `/${collection}/oa-${collection}-1/versions`, { body: { expected_version: 1, body: { title: 'stale' } }, as: 'writer' })).status).toBe(409);
      expect((await r(`/${collection}/{id}/supersession`, `/${collection}/oa-${collection}-1/supersession`)).status).toBe(200);
      expect((await r(`/${collection}/{id}/supersession`, `/${collection}/no-such/supersession`)).status).toBe(404);
      await r(`/${collection}/{id}`, `/${collection}/oa-${collection}-1?version=1`);
    }
    expect((await r('/', '/', { body: { kind: 'generic', id: 'oa-note', body: { text: 'hello' } }, as: 'writer' })).status).toBe(201);
    expect((await r('/', '/', { body: { kind: 'generic', id: 'oa-note', body: {} }, as: 'writer' })).status).toBe(409);
    await r('/', '/', { body: { kind: 'item', id: 'x', body: {}, status: 'retired' }, as: 'writer' });
    const note = await r('/{id}', '/oa-note');
    expect(note.status).toBe(200);
    expect((await r('/{id}', '/oa-note', { headers: { 'if-none-match': note.headers.get('etag')! } })).status).toBe(304);
    expect((await r('/{id}/versions', '/oa-note/versions', { body: { expected_version: 1, body: { text: 'again' }, status: 'deprecated' }, as: 'writer' })).status).toBe(201);
    expect((await r('/{id}/supersession', '/oa-note/supersession')).status).toBe(200);
    expect((await r('/{id}', '/oa-nothing')).status).toBe(404);
    await r('/');
    const malformed = await r('/admin/seed', '/admin/seed', { method: 'POST', body: 'seed please', as: 'admin' });
    expect([malformed.status, malformed.headers.get('content-type'), malformed.body?.code]).toEqual([400, 'application/problem+json', 'MALFORMED_JSON']);
    expect((await r('/admin/seed', '/admin/seed', { method: 'POST', as: 'admin' })).status).toBe(200);
    expect((await r('/admin/seed', '/admin/seed', { method: 'POST', as: 'writer' })).status).toBe(403);
    expect((await r('/applicability', '/applicability?product_category=battery.ev&jurisdiction=DE')).status).toBe(200);
    await r('/applicability', '/applicability?at=never');
    expect((await r('/schemas/profile-manifest')).status).toBe(200);
    expect((await r('/models/{id}/validate', '/models/oa-models-1/validate', { body: { chemistry: 'LFP' }, as: 'writer' })).status).toBe(200);
    expect((await r('/models/{id}/validate', '/models/oa-models-1/validate', { body: { chemistry: 'lead' }, as: 'writer' })).status).toBe(200);
    await r('/models/{id}/validate', '/models/no-such/validate?version=1', { body: {}, as: 'writer' });
  });

  it('match the documents: issuer', async () => {
    const i = (template: string, path = template, init: Call = {}) => call('issuer', template, path, init);
    await createModel(platform, 'oa-battery');
    expect(
      (
        await i('/admin/profiles', '/admin/profiles', {
          body: { profile_id: 'oa-ev', description: 'EV', capability_classes: ['trace', 'verify-offline'], default_capability_class: 'trace', claims: { regulation: 'EU 2023/1542' } },
          as: 'admin',
        })
      ).status,
    ).toBe(201);
    expect((await i('/admin/profiles', '/admin/profiles', { body: { profile_id: 'oa-ev', capability_classes: ['trace', 'verify-offline'] }, as: 'admin' })).status).toBe(200);
    expect((await i('/admin/profiles', '/admin/profiles', { body: { profile_id: 'oa-ev', capability_classes: ['trace'] }, as: 'writer' })).status).toBe(403);
    expect((await i('/admin/applicability', '/admin/applicability', { body: { model_id: 'oa-battery', profile_id: 'oa-ev' }, as: 'admin' })).status).toBe(201);
    expect((await i('/admin/applicability', '/admin/applicability', { body: { model_id: 'oa-battery', model_version: 1, profile_id: 'oa-ev' }, as: 'admin' })).status).toBe(201);
    expect((await i('/admin/applicability', '/admin/applicability', { body: { model_id: 'oa-battery', model_version: 1, profile_id: 'oa-ev' }, as: 'admin' })).status).toBe(200);
    expect((await i('/admin/applicability', '/admin/applicability', { body: { model_id: 'oa-battery', profile_id: 'oa-none' }, as: 'admin' })).status).toBe(422);
    const body = {
      identity: 'https://id.gs1.org/01/09520123456788/21/OA-1',
      type_ref: { id: 'oa-battery', version: 1 },
      config_vector: { chemistry: 'LFP', capacity_kwh: 75 },
      capability_class: 'verify-offline',
    };
    const created = await i('/passports', '/passports', { body, as: 'writer' });
    expect(created.status).toBe(201);
    expect((await i('/passports', '/passports', { body: { ...body, identity: 'https://id.gs1.org/01/09520123456788/21/OA-2', config_vector: { chemistry: 'lead' } }, as: 'writer' })).status).toBe(422);
    const id = created.body.passport_id as string;
    const batch = await i('/passports/batch', '/passports/batch', { body: { passports: [{ ...body, identity: 'https://id.gs1.org/01/09520123456788/21/OA-B1' }] }, as: 'writer' });
    expect(batch.status).toBe(201);
    expect((await i('/passports/batch', '/passports/batch', { body: { passports: [body] }, as: 'writer' })).status).toBe(409);
    expect((await i('/passports/batch', '/passports/batch', { body: { passports: [{ ...body, config_vector: { chemistry: 'lead' } }] }, as: 'writer' })).status).toBe(422);
    for (const type of ['activated', 'ObjectEvent', 'AggregationEvent', 'TransactionEvent', 'TransformationEvent']) {
      expect((await i('/passports/{id}/events', `/passports/${id}/events`, { body: { type, payload: PAYLOADS[type]!() }, as: 'writer' })).status).toBe(201);
    }
    expect((await i('/passports/{id}/events', `/passports/${id}/events`, { body: { type: 'reinstated', payload: PAYLOADS.reinstated!() }, as: 'writer' })).status).toBe(409);
    expect((await i('/passports/{id}/pack', `/passports/${id}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
    expect((await i('/passports/{id}/pack', '/passports/no-such/pack', { method: 'POST', as: 'writer' })).status).toBe(404);
    // A POST that takes no body refuses one that is not JSON, and mints nothing.
    const before = (await i('/passports/{id}', `/passports/${id}`)).body.latest_pack;
    const malformed = await i('/passports/{id}/pack', `/passports/${id}/pack`, { method: 'POST', body: '{"passport_id": ', as: 'writer' });
    expect([malformed.status, malformed.headers.get('content-type'), malformed.body?.code]).toEqual([400, 'application/problem+json', 'MALFORMED_JSON']);
    expect((await i('/passports/{id}', `/passports/${id}`)).body.latest_pack).toBe(before);
    expect((await i('/passports/{id}', `/passports/${id}`)).status).toBe(200);
    expect((await i('/passports/{id}', `/passports/${id}?include_events=true`)).status).toBe(200);
    expect((await i('/passports/{id}', '/passports/no-such')).status).toBe(404);
    // As it stood at an instant: today's head (signed), the empty log's, before creation, malformed.
    expect((await i('/passports/{id}', `/passports/${id}?at=2999-01-01T00:00:00Z&include_events=true&include_proof=true`)).status).toBe(200);
    expect((await i('/passports/{id}', `/passports/${id}?at=${encodeURIComponent(created.body.core.created_at)}`)).status).toBe(200);
    expect((await i('/passports/{id}', `/passports/${id}?at=2000-01-01T00:00:00Z`)).status).toBe(404);
    expect((await i('/passports/{id}', `/passports/${id}?at=yesterday`)).status).toBe(400);
    // The event stream's refusals (its 200 is a stream without end: test/issuer/event-stream.test.ts).
    expect((await i('/passports/{id}/events', `/passports/${id}/events`, { headers: { accept: 'application/json' } })).status).toBe(406);
    expect((await i('/passports/{id}/events', '/passports/no-such/events', { headers: { accept: 'text/event-stream' } })).status).toBe(404);
    expect((await i('/passports/{id}/events', `/passports/${id}/events?after=x`, { headers: { accept: 'text/event-stream' } })).status).toBe(400);
    // Its 200: the stream's opening, read up to its first event, then left (the stream has no end).
    expect(await openStream('issuer', '/passports/{id}/events', `/passports/${id}/events`)).toMatch(/^retry: \d+\n\nid: 0\ndata: \{/);
    expect((await i('/passports/{id}/verdict', `/passports/${id}/verdict`)).status).toBe(200);
    expect((await i('/passports/{id}/verdict', '/passports/no-such/verdict')).status).toBe(404);
    const fresh = await createPassport(platform, 'oa-battery');
    await appendEvent(platform, fresh.passport_id, 'activated', PAYLOADS.activated!());
    await i('/passports/{id}/verdict', `/passports/${fresh.passport_id}/verdict`);
    await i('/passports/{id}/pack', `/passports/${fresh.passport_id}/pack`, { method: 'POST', as: 'writer' });
    // The credential, the DID document and the status lists, in each representation.
    const credential = await i('/passports/{id}/credential', `/passports/${id}/credential`);
    expect(credential.status).toBe(200);
    for (const accept of ['application/vc', 'application/json']) expect((await i('/passports/{id}/credential', `/passports/${id}/credential`, { headers: { accept } })).status).toBe(200);
    expect((await i('/passports/{id}/credential', `/passports/${id}/credential`, { headers: { 'if-none-match': credential.headers.get('etag')! } })).status).toBe(304);
    expect((await i('/passports/{id}/credential', '/passports/no-such/credential')).status).toBe(404);
    expect((await i('/passports/{id}/credential', `/passports/${id}/credential?at=${encodeURIComponent(new Date().toISOString())}`)).status).toBe(200);
    expect((await i('/passports/{id}/credential', `/passports/${id}/credential?at=2000-01-01T00:00:00Z`)).status).toBe(404);
    for (const path of ['/did.json', '/.well-known/did.json', '/contexts/passport/v1', '/vocab']) {
      const document = await i(path);
      expect(document.status).toBe(200);
      expect((await i(path, path, { headers: { 'if-none-match': document.headers.get('etag')! } })).status).toBe(304);
    }
    const list = await i('/status-lists/{purpose}/{list}', '/status-lists/revocation/0');
    expect(list.status).toBe(200);
    expect((await i('/status-lists/{purpose}/{list}', '/status-lists/suspension/0', { headers: { accept: 'application/json' } })).status).toBe(200);
    expect((await i('/status-lists/{purpose}/{list}', '/status-lists/revocation/0', { headers: { 'if-none-match': list.headers.get('etag')! } })).status).toBe(304);
    expect((await i('/status-lists/{purpose}/{list}', '/status-lists/revocation/9')).status).toBe(404);
    // A second live passport of an identity is a 409.
    expect((await i('/passports', '/passports', { body, as: 'writer' })).status).toBe(409);
    // A restore holds appends (503) until an admin acknowledges it; recorded here as npm run restore records it.
    await sql(platform.databaseUrl, 'INSERT INTO issuer.restore (snapshot_at, backup, passports) VALUES (now(), $1, 2)', ['/backups/oa.backup']);
    expect((await i('/passports/{id}/events', `/passports/${id}/events`, { body: { type: 'ObjectEvent', payload: PAYLOADS.ObjectEvent!() }, as: 'writer' })).status).toBe(503);
    expect((await i('/admin/restore/acknowledgement', '/admin/restore/acknowledgement', { method: 'POST', as: 'writer' })).status).toBe(403);
    expect((await i('/admin/restore/acknowledgement', '/admin/restore/acknowledgement', { method: 'POST', as: 'admin' })).status).toBe(200);
    expect((await i('/admin/restore/acknowledgement', '/admin/restore/acknowledgement', { method: 'POST', as: 'admin' })).body).toEqual({ acknowledged: [] });
    // API tokens: issued (with the secret once), listed, revoked; an unknown operator and token are 404s, a suspended operator's a 409.
    const issued = await i('/admin/tokens', '/admin/tokens', { body: { operator: 'default', role: 'reader', label: 'oa', expires_at: new Date(Date.now() + 3_600_000).toISOString() }, as: 'admin' });
    expect(issued.status).toBe(201);
    expect((await i('/admin/tokens', '/admin/tokens', { body: { operator: 'oa-nobody', role: 'reader', label: 'oa' }, as: 'admin' })).status).toBe(404);
    expect((await i('/admin/tokens', '/admin/tokens', { body: { role: 'reader', label: 'oa' }, as: 'writer' })).status).toBe(403);
    expect((await i('/admin/tokens', '/admin/tokens?operator=default', { as: 'admin' })).status).toBe(200);
    expect((await i('/admin/tokens', '/admin/tokens', { as: 'admin' })).status).toBe(200);
    expect((await i('/admin/tokens/{id}/revocation', `/admin/tokens/${issued.body.id}/revocation?operator=default`, { method: 'POST', as: 'admin' })).status).toBe(200);
    expect((await i('/admin/tokens/{id}/revocation', `/admin/tokens/${issued.body.id}/revocation`, { method: 'POST', as: 'admin' })).status).toBe(404);
    await sql(platform.databaseUrl, "INSERT INTO identity.operator (id, name, status, suspended_at) VALUES ('oa-suspended', 'OA', 'suspended', now())");
    expect((await i('/admin/tokens', '/admin/tokens', { body: { operator: 'oa-suspended', role: 'reader', label: 'oa' }, as: 'admin' })).status).toBe(409);
    // Operators: created (then its creation repeated), listed, read, its DID document, suspended.
    const operator = { id: `oa-${process.pid}`, name: 'OA operator' };
    expect((await i('/operators', '/operators', { body: operator, as: 'admin' })).status).toBe(201);
    expect((await i('/operators', '/operators', { body: operator, as: 'admin' })).status).toBe(200);
    expect((await i('/operators', '/operators', { as: 'admin' })).status).toBe(200);
    expect((await i('/operators/{id}', `/operators/${operator.id}`, { as: 'admin' })).status).toBe(200);
    const operatorDid = await i('/operators/{id}/did.json', `/operators/${operator.id}/did.json`);
    expect(operatorDid.status).toBe(200);
    expect((await i('/operators/{id}/did.json', `/operators/${operator.id}/did.json`, { headers: { 'if-none-match': operatorDid.headers.get('etag')! } })).status).toBe(304);
    expect((await i('/operators/{id}/suspension', `/operators/${operator.id}/suspension`, { method: 'POST', as: 'admin' })).status).toBe(200);
    // The Digital Link resolver, at every granularity: the linkset of an identity with a passport, a 404 for one without.
    const values: Record<string, string> = { gtin: '09520123456788', variant: 'OA-V', lot: 'OA-L', serial: 'OA-S' };
    for (const template of Object.keys(documents.issuer.paths).filter((path) => path.startsWith('/01/'))) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!);
      expect((await i(template, path, { headers: { accept: 'application/linkset+json' } })).status).toBe(404);
      expect((await i('/passports', '/passports', { body: { ...body, identity: `https://id.gs1.org${path}`, capability_class: undefined }, as: 'writer' })).status).toBe(201);
      expect((await i(template, path, { headers: { accept: 'application/linkset+json' } })).status).toBe(200);
      expect((await i(template, `${path}?linkType=linkset`)).status).toBe(200);
    }
  });

  it('match the documents: archive', async () => {
    const a = (template: string, path = template, init: Call = {}) => call('archive', template, path, init);
    await createModel(platform, 'oa-archived');
    const passport = await createPassport(platform, 'oa-archived');
    await appendEvent(platform, passport.passport_id, 'activated', PAYLOADS.activated!());
    const created = await a('/snapshots', '/snapshots', { body: { passport_id: passport.passport_id }, as: 'writer' });
    expect(created.status).toBe(201);
    expect((await a('/snapshots', '/snapshots', { body: { passport_id: passport.passport_id }, as: 'writer' })).status).toBe(201);
    expect((await a('/snapshots', '/snapshots', { body: { passport_id: 'no-such-passport' }, as: 'writer' })).status).toBe(422);
    const snapshot = created.body.id as string;
    const page = await a('/snapshots', `/snapshots?passport_id=${encodeURIComponent(passport.passport_id)}&limit=1`);
    expect(page.status).toBe(200);
    await a('/snapshots', `/snapshots?after=${encodeURIComponent(page.body.next)}&at=${encodeURIComponent(fromNow(0))}`);
    expect((await a('/snapshots/{id}', `/snapshots/${snapshot}`)).status).toBe(200);
    expect((await a('/snapshots/{id}', `/snapshots/${snapshot}`, { headers: { 'if-none-match': created.body.sha512 ? `"${created.body.sha512}"` : '' } })).status).toBe(304);
    expect((await a('/snapshots/{id}', '/snapshots/no-such')).status).toBe(404);
    expect((await a('/snapshots/{id}/notarization', `/snapshots/${snapshot}/notarization`)).status).toBe(200);
    expect((await a('/snapshots/{id}/notarization', '/snapshots/no-such/notarization')).status).toBe(404);
  });

  it('match the documents: what every service has', async () => {
    for (const service of SERVICES) {
      const c = (template: string, path = template, init: Call = {}) => call(service, template, path, init);
      expect((await c('/')).status).toBe(200);
      expect((await c('/healthz')).status).toBe(200);
      expect((await c('/healthz', '/healthz', { method: 'DELETE' })).status).toBe(405);
      expect((await c('/admin/log', '/admin/log?limit=2', { as: 'admin' })).status).toBe(200);
      const page = await c('/admin/log', '/admin/log?limit=2', { as: 'admin' });
      if (page.body.next) await c('/admin/log', `/admin/log?limit=2&before=${encodeURIComponent(page.body.next)}`, { as: 'admin' });
      expect((await c('/admin/log', '/admin/log', { as: 'writer' })).status).toBe(403);
      expect((await c('/admin/log')).status).toBe(401);
      if (service !== 'registry') expect((await c('/keyring')).status).toBe(200);
    }
  });

  it('match the documents when refused: an undeclared query parameter on every operation', async () => {
    for (const service of SERVICES) {
      for (const [template, operations] of Object.entries(documents[service].paths)) {
        for (const method of Object.keys(operations)) {
          const path = template.replace(/\{\w+\}/g, 'oa-1');
          const response = await call(service, template, `${path}?undeclared_parameter=1`, {
            method: method.toUpperCase(),
            as: method === 'get' ? undefined : 'admin',
            ...(method === 'post' ? { body: {} } : {}),
          });
          expect(response.status, `${service} ${method} ${template}`).toBeGreaterThanOrEqual(400);
        }
      }
    }
  });

  it('left no operation unreached, and every answer matched its schema', () => {
    const unreached: string[] = [];
    for (const service of SERVICES) {
      for (const [path, operations] of Object.entries(documents[service].paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          const statuses = reached.get(`${service} ${method.toUpperCase()} ${path}`) ?? new Set();
          for (const status of Object.keys(operation.responses).filter((code) => code.startsWith('2') || code === '304')) {
            if (!statuses.has(Number(status))) unreached.push(`${service} ${method.toUpperCase()} ${path} ${status}`);
          }
          if (![...statuses].some((status) => status >= 400)) unreached.push(`${service} ${method.toUpperCase()} ${path} (no problem answer)`);
        }
      }
    }
    if (unreached.length) console.log(`Not reached:\n  ${unreached.join('\n  ')}`);
    // A signed health of 503 needs the database gone: test/first-contact/database-outage.test.ts.
    expect(unreached.filter((operation) => !/ \/healthz 503$/.test(operation))).toEqual([]);
    expect(failures).toEqual([]);
  });
});
