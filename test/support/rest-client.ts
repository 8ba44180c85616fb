/**
 * The REST calls of the soak parts, as a client of the platform would make them: JSON in
 * and out, a bearer token, and the steps that set up and read back passports.
 */
import { pinsFrom, type PinSet } from '../../verifier/pins.js';

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON, or undefined when the body is not JSON. */
  body: any;
  text: string;
}

/** A JSON request with an optional bearer token; throws only when no answer comes (the server is down). */
export async function requestJson(url: string, method: string, options: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, body, text };
}

export class RestClient {
  constructor(
    /** The facade's origin; each service is under /<service>. */
    readonly facadeUrl: string,
    private readonly token: string,
  ) {}

  /** Any status is returned; throws only when no answer comes. */
  call(method: string, path: string, body?: unknown): Promise<Answer> {
    return requestJson(`${this.facadeUrl}${path}`, method, { token: this.token, body });
  }

  /** Like call(), but a status other than `expected` is an error naming the answer. */
  async expect(expected: number, method: string, path: string, body?: unknown): Promise<any> {
    const answer = await this.call(method, path, body);
    if (answer.status !== expected) throw new Error(`${method} ${path}: ${answer.status}, expected ${expected}: ${answer.text.slice(0, 400)}`);
    return answer.body;
  }

  async bytes(path: string): Promise<Uint8Array> {
    const response = await fetch(`${this.facadeUrl}${path}`);
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }

  /** A registry model whose config vectors are `{ chemistry }`, at version 1. */
  createModel(id: string): Promise<unknown> {
    const schema = { type: 'object', properties: { chemistry: { enum: ['LFP', 'NMC'] } }, required: ['chemistry'], additionalProperties: false };
    return this.expect(201, 'POST', '/registry/', { kind: 'model', id, body: { title: `Soak model ${id}`, schema } });
  }

  /** A new passport of `model`; its id. */
  async createPassport(model: string, serial: string): Promise<string> {
    const passport = await this.expect(201, 'POST', '/issuer/passports', {
      identity: `https://id.gs1.org/01/09520123456788/21/${serial}`,
      type_ref: { id: model, version: 1 },
      config_vector: { chemistry: 'LFP' },
    });
    return passport.passport_id as string;
  }

  /** Appends an EPCIS ObjectEvent; the answer as it comes. */
  appendObjectEvent(passportId: string, note: string): Promise<Answer> {
    return this.call('POST', `/issuer/passports/${encodeURIComponent(passportId)}/events`, {
      type: 'ObjectEvent',
      payload: {
        eventTime: new Date().toISOString(),
        eventTimeZoneOffset: '+00:00',
        action: 'OBSERVE',
        bizStep: 'inspecting',
        epcList: ['https://id.gs1.org/01/09520123456788/21/SOAK'],
        readPoint: { id: `urn:epc:id:sgln:9520123.00001.${note}` },
      },
    });
  }

  /** The passport with every event, as the verifier reads it. */
  passportWithEvents(passportId: string): Promise<{ passport_id: string; status: string; log: Record<string, unknown>[]; log_head: unknown }> {
    return this.expect(200, 'GET', `/issuer/passports/${encodeURIComponent(passportId)}?include_events=true`);
  }

  /** Every snapshot, all pages. */
  async snapshots(passportId?: string): Promise<{ id: string; passport_id: string; size: number; sha512: string }[]> {
    const all = [];
    let after: string | null = null;
    do {
      const query = new URLSearchParams({ limit: '100', ...(passportId ? { passport_id: passportId } : {}), ...(after ? { after } : {}) });
      const page = await this.expect(200, 'GET', `/archive/snapshots?${query}`);
      all.push(...page.snapshots);
      after = page.next;
    } while (after);
    return all;
  }

  /** The keys a verifier pins: every service's keyring and the trust anchor bundle. */
  async pins(): Promise<PinSet> {
    const keySets = await Promise.all(['issuer', 'archive', 'trust'].map((service) => this.expect(200, 'GET', `/${service}/keyring`)));
    return pinsFrom({ keySets, anchorBundle: await this.expect(200, 'GET', '/trust/anchor-bundle') });
  }
}
