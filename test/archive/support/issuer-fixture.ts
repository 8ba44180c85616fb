/**
 * A real passport made through the issuer's REST interface (with the registry model it needs), for
 * the archive's end-to-end test and benchmark. Everything the archive assumes about the issuer's
 * and registry's request bodies is in this one file; every unexpected answer throws with the
 * status and body, so a missing or changed service fails loudly rather than being skipped.
 *
 * Request shapes follow DESIGN §4: POST /passports takes identity, type_ref {model, version},
 * config_vector and capability_class; POST /passports/{id}/events takes a typed event (EPCIS 2.0
 * ObjectEvent or a lifecycle event such as `activated`).
 */

export interface RestCaller {
  (service: 'issuer' | 'registry' | 'archive', path: string, init?: { method?: string; body?: unknown; as?: 'admin' | 'writer' }): Promise<{ status: number; body: any; text: string }>;
}

/** GS1's documentation GTIN, with a valid check digit. */
const GTIN = '09506000134352';

export class ServiceMissing extends Error {
  constructor(what: string, answer: { status: number; text: string }) {
    super(`${what}: answered ${answer.status} ${answer.text.slice(0, 600)}`);
    this.name = 'ServiceMissing';
  }
}

function expectStatus(what: string, answer: { status: number; text: string }, ...statuses: number[]) {
  if (!statuses.includes(answer.status)) throw new ServiceMissing(what, answer);
}

/** The first record of kind model in a registry listing, whatever it wraps the records in. */
function firstModel(body: unknown): { id: string; version: number } | undefined {
  const seen = new Set<unknown>();
  const visit = (value: unknown): { id: string; version: number } | undefined => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return undefined;
    seen.add(value);
    if (Array.isArray(value)) {
      for (const item of value) {
        const found = visit(item);
        if (found) return found;
      }
      return undefined;
    }
    const record = value as Record<string, unknown>;
    if (typeof record.id === 'string' && typeof record.version === 'number' && (record.kind === undefined || record.kind === 'model' || record.kind === 'models')) {
      return { id: record.id, version: record.version };
    }
    for (const member of Object.values(record)) {
      const found = visit(member);
      if (found) return found;
    }
    return undefined;
  };
  return visit(body);
}

/** A registry model to type passports with: the sample register is loaded, then its first model taken. */
export async function registryModel(rest: RestCaller): Promise<{ id: string; version: number }> {
  const seed = await rest('registry', '/admin/seed', { method: 'POST', as: 'admin', body: {} });
  expectStatus('POST /registry/admin/seed', seed, 200, 201, 204, 409);
  const models = await rest('registry', '/models');
  expectStatus('GET /registry/models', models, 200);
  const model = firstModel(models.body);
  if (!model) throw new ServiceMissing('GET /registry/models lists no model', models);
  return model;
}

export interface IssuedPassport {
  id: string;
  /** Events appended, the activation included. */
  events: number;
}

/** A passport with an activation and `traceEvents` ObjectEvents, and a Tier-A pack when `pack` is set. */
export async function issuePassport(rest: RestCaller, options: { traceEvents: number; lot: string; pack?: boolean; model?: { id: string; version: number } }): Promise<IssuedPassport> {
  const model = options.model ?? (await registryModel(rest));
  const created = await rest('issuer', '/passports', {
    as: 'writer',
    body: {
      identity: `https://id.gs1.org/01/${GTIN}/10/${options.lot}`,
      type_ref: { model: model.id, version: model.version },
      config_vector: {},
      capability_class: 'B',
    },
  });
  expectStatus('POST /issuer/passports', created, 201);
  const id = String(created.body.passport_id ?? created.body.id);
  const append = async (event: unknown) => {
    const appended = await rest('issuer', `/passports/${encodeURIComponent(id)}/events`, { as: 'writer', body: event });
    expectStatus(`POST /issuer/passports/${id}/events`, appended, 200, 201);
  };
  await append({ type: 'activated', payload: {} });
  for (let index = 0; index < options.traceEvents; index += 1) {
    await append({
      type: 'ObjectEvent',
      payload: {
        eventTime: new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString(),
        eventTimeZoneOffset: '+00:00',
        action: 'OBSERVE',
        bizStep: 'inspecting',
        epcList: [`https://id.gs1.org/01/${GTIN}/21/${options.lot}-${index % 17}`],
      },
    });
  }
  if (options.pack) {
    const pack = await rest('issuer', `/passports/${encodeURIComponent(id)}/pack`, { as: 'writer', body: {} });
    expectStatus(`POST /issuer/passports/${id}/pack`, pack, 200, 201);
  }
  return { id, events: options.traceEvents + 1 };
}
