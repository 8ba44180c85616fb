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
    body: {
      identity: `https://id.gs1.org/01/${GTIN}/21/${options.serial}`,
      granularity: 'item',
      type_ref: { id: model.id, version: model.version },
      config_vector: CONFIG_VECTOR,
      capability_class: 'trace',
    },
  });
  expectStatus('POST /issuer/passports', created, 201);
  const id = String(created.body.passport_id);
  const append = async (type: string, payload: Record<string, unknown>) => {
    const appended = await rest('issuer', `/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: { type, payload } });
    expectStatus(`POST /issuer/passports/${id}/events`, appended, 201);
  };
  await append('activated', { placed_on_market_at: '2026-01-01T00:00:00Z' });
  const appendTrace = (index: number) =>
    append('ObjectEvent', {
      eventTime: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
      eventTimeZoneOffset: '+00:00',
      action: 'OBSERVE',
      bizStep: 'inspecting',
      epcList: [`https://id.gs1.org/01/${GTIN}/21/${options.serial}`],
      readPoint: { id: 'urn:epc:id:sgln:9520123.00001.0' },
    });
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
