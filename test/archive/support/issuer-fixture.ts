/**
 * A real passport made through the issuer's REST interface (with the registry model it needs), for
 * the archive's end-to-end test and benchmark. Everything the archive assumes about the issuer's
 * and registry's request bodies is in this one file; every unexpected answer throws with the
 * status and body, so a missing or changed service fails loudly rather than being skipped.
 *
 * Request shapes are the issuer's and registry's: POST /registry/ makes a model record; POST
 * /passports takes identity, granularity, type_ref {id, version}, config_vector and
 * capability_class; POST /passports/{id}/events takes {type, payload} (an EPCIS 2.0 ObjectEvent with
 * its camelCase members, or a lifecycle event such as `activated`).
 */

export type RestCaller = (
  service: 'issuer' | 'registry' | 'archive',
  path: string,
  init?: { method?: string; body?: unknown; as?: 'admin' | 'writer' },
) => Promise<{ status: number; body: any; text: string }>;

/** A GTIN with a valid check digit. */
const GTIN = '09520123456788';

/** The JSON Schema of the archive tests' model, and a config vector it accepts. */
const MODEL_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { chemistry: { enum: ['LFP', 'NMC', 'LTO'] }, capacity_kwh: { type: 'number', exclusiveMinimum: 0 } },
  required: ['chemistry'],
  additionalProperties: false,
};
const CONFIG_VECTOR = { chemistry: 'LFP', capacity_kwh: 75 };

const ACTIVATION = { placed_on_market_at: '2026-01-01T00:00:00Z' };
const identityOf = (serial: string) => `https://id.gs1.org/01/${GTIN}/21/${serial}`;
/** The `index`th EPCIS ObjectEvent of the passport of `serial`, a minute after the one before. */
const traceEvent = (serial: string, index: number) => ({
  eventTime: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
  eventTimeZoneOffset: '+00:00',
  action: 'OBSERVE',
  bizStep: 'inspecting',
  epcList: [identityOf(serial)],
  readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
});

export class ServiceMissing extends Error {
  constructor(what: string, answer: { status: number; text: string }) {
    super(`${what}: answered ${answer.status} ${answer.text.slice(0, 600)}`);
    this.name = 'ServiceMissing';
  }
}

function expectStatus(what: string, answer: { status: number; text: string }, ...statuses: number[]) {
  if (!statuses.includes(answer.status)) throw new ServiceMissing(what, answer);
}

/** A registry model (a record of kind model, version 1) to type passports with, made through the registry's `POST /`. */
export async function registryModel(rest: RestCaller, id = `archive-battery-${process.pid}-${Date.now()}`): Promise<{ id: string; version: number }> {
  const created = await rest('registry', '/', { as: 'writer', body: { kind: 'model', id, body: { title: 'Battery (archive tests)', schema: MODEL_SCHEMA } } });
  expectStatus('POST /registry/ (a model record)', created, 201);
  return { id, version: 1 };
}

export interface IssuedPassport {
  id: string;
  /** Events appended, the activation included. */
  events: number;
}

/** A passport with an activation and `traceEvents` ObjectEvents, and a Tier-A pack when `pack` is set. */
export async function issuePassport(
  rest: RestCaller,
  options: { traceEvents: number; serial: string; pack?: boolean; model?: { id: string; version: number }; concurrency?: number },
): Promise<IssuedPassport> {
  const model = options.model ?? (await registryModel(rest));
  const created = await rest('issuer', '/passports', {
    as: 'writer',
    body: { identity: identityOf(options.serial), granularity: 'item', type_ref: { id: model.id, version: model.version }, config_vector: CONFIG_VECTOR, capability_class: 'trace' },
  });
  expectStatus('POST /issuer/passports', created, 201);
  const id = String(created.body.passport_id);
  const append = async (type: string, payload: Record<string, unknown>) => {
    const appended = await rest('issuer', `/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: { type, payload } });
    expectStatus(`POST /issuer/passports/${id}/events`, appended, 201);
  };
  await append('activated', ACTIVATION);
  const appendTrace = (index: number) => append('ObjectEvent', traceEvent(options.serial, index));
  // Several clients appending at once overlap their HTTP round trips; the issuer orders the log.
  let next = 0;
  const appender = async () => {
    for (let index = next++; index < options.traceEvents; index = next++) await appendTrace(index);
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 1 }, appender));
  if (options.pack) {
    const pack = await rest('issuer', `/passports/${encodeURIComponent(id)}/pack`, { as: 'writer', body: {} });
    expectStatus(`POST /issuer/passports/${id}/pack`, pack, 200, 201);
  }
  return { id, events: options.traceEvents + 1 };
}

export type GraphqlCaller = (query: string, variables: Record<string, unknown>, as: 'writer') => Promise<{ data?: any; errors?: any[] }>;

/** The passports of a batch per operation: three aliased mutations each keep an operation within the gateway's 60 aliases. */
const PASSPORTS_PER_OPERATION = 15;

/** An operation sent as the writer, which must answer without errors. */
const callAsWriter = async (graphql: GraphqlCaller, what: string, query: string, variables: Record<string, unknown>) => {
  const answer = await graphql(query, variables, 'writer');
  if (answer.errors?.length || !answer.data) throw new ServiceMissing(what, { status: 200, text: JSON.stringify(answer.errors ?? answer) });
  return answer.data;
};

/**
 * Passports with empty logs, as issuePassport creates them, all in one createPassports (POST
 * /passports/batch: one transaction, the model asked once), not a createPassport each. Their ids, in order.
 */
export async function createPassportBatch(graphql: GraphqlCaller, options: { serials: readonly string[]; model: { id: string; version: number } }): Promise<string[]> {
  const created = await callAsWriter(graphql, 'mutation createPassports', 'mutation CreatePassports($inputs: [CreatePassportInput!]!) { createPassports(inputs: $inputs) { id } }', {
    inputs: options.serials.map((serial) => ({
      identity: identityOf(serial),
      granularity: 'item',
      typeRef: { id: options.model.id, version: options.model.version },
      configVector: CONFIG_VECTOR,
      capabilityClass: 'trace',
    })),
  });
  return (created.createPassports as { id: string }[]).map((passport) => String(passport.id));
}

/**
 * Passports as issuePassport makes them (an activation, one ObjectEvent, a Tier-A pack), many at a
 * time: made by createPassportBatch, then the same mutations the REST routes map onto, sent to the
 * gateway aliased, a batch of passports per operation (the gateway runs a mutation's fields one after
 * another, so each passport's events keep their order). For setups of hundreds of passports, where a
 * request each costs most of the time. `passports` is each serial with the id createPassportBatch gave it.
 */
export async function activatePassportBatch(graphql: GraphqlCaller, passports: readonly { serial: string; id: string }[]): Promise<void> {
  if (passports.length > PASSPORTS_PER_OPERATION) throw new Error(`at most ${PASSPORTS_PER_OPERATION} passports per batch`);
  const indexes = passports.map((_, index) => index);
  await callAsWriter(
    graphql,
    'mutation appendPassportEvent, mintPassportPack (aliased)',
    `mutation ActivateTraceAndPack($activation: JSONObject!, ${indexes.map((i) => `$id${i}: ID!, $trace${i}: JSONObject!`).join(', ')}) { ${indexes
      .map(
        (i) =>
          `a${i}: appendPassportEvent(passportId: $id${i}, type: "activated", payload: $activation) { status } t${i}: appendPassportEvent(passportId: $id${i}, type: "ObjectEvent", payload: $trace${i}) { status } k${i}: mintPassportPack(passportId: $id${i}) { size }`,
      )
      .join(' ')} }`,
    {
      activation: ACTIVATION,
      ...Object.fromEntries(
        passports.flatMap(({ serial, id }, i) => [
          [`id${i}`, id],
          [`trace${i}`, traceEvent(serial, 0)],
        ]),
      ),
    },
  );
}
