/**
 * How the issuer's REST requests become GraphQL variables, and its GraphQL data REST answers. REST
 * members are snake_case; event payloads are carried opaquely (EPCIS 2.0 member names stay
 * camelCase inside `payload`), and signed documents pass through verbatim.
 */
import Negotiator from 'negotiator';
import { RequestProblem } from '../../../lib/http/request-problem.js';
import { problem, type Problem } from '../../../lib/problem.js';
import type { RouteContext, RouteRequest, RouteResult } from '../../route-table.js';
import { PASSPORT_EVENTS } from './operations.js';

export const object = (body: unknown): Record<string, unknown> => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {});

export function passportNotFound(): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', 'The issuer has no passport with this id.'));
}

export const passportUrl = (context: RouteContext, id: string) => `${context.baseUrl}/passports/${encodeURIComponent(id)}`;

/** A passport to create as GraphQL's CreatePassportInput. */
function creationInput(body: unknown) {
  const input = object(body);
  const typeRef = input.type_ref;
  return {
    identity: input.identity,
    granularity: input.granularity,
    // Anything but an object goes to GraphQL as it is, which refuses it with a 400.
    typeRef: typeRef !== null && typeof typeRef === 'object' && !Array.isArray(typeRef) ? { id: object(typeRef).id, version: object(typeRef).version } : typeRef,
    configVector: input.config_vector,
    capabilityClass: input.capability_class,
  };
}

/** POST /passports: the passport to create. */
export function creationVariables({ body }: RouteRequest) {
  return { input: creationInput(body) };
}

/** POST /passports/batch: the passports to create, in order. */
export function batchCreationVariables({ body }: RouteRequest) {
  const passports = object(body).passports;
  return { inputs: Array.isArray(passports) ? passports.map(creationInput) : passports };
}

/** The one-live-passport refusal names the live passport; its URL is the facade's to write. */
export function withLivePassportUrl(details: Problem, context: RouteContext): Problem {
  return details.code === 'LIVE_PASSPORT_EXISTS' && typeof details.passport_id === 'string' ? { ...details, passport_url: passportUrl(context, details.passport_id) } : details;
}

/** A refused batch names, for each item the one-live-passport rule refused, the live passport's URL. */
export function withLivePassportUrls(details: Problem, context: RouteContext): Problem {
  if (details.code !== 'BATCH_REFUSED' || !Array.isArray(details.items)) return details;
  return { ...details, items: (details.items as Problem[]).map((item) => withLivePassportUrl(item, context)) };
}

/** GET /passports/{id}: the passport, at an instant with `at`, with its events and proof when asked. */
export function passportVariables({ params, query }: RouteRequest) {
  if (query.include_proof === true && query.at === undefined)
    throw new RequestProblem(problem(400, 'INVALID_QUERY', 'include_proof needs at: the proof runs from the head at that instant to today’s'));
  return { id: params.id, withEvents: query.include_events === true, at: query.at, asOf: query.at !== undefined, withProof: query.include_proof === true };
}

/** A passport as REST writes it: its events as `log`, `as_of` only when asked about an instant, `disclosures` only when the caller may read some. */
export function passportOut({ events, as_of, disclosures, ...passport }: Record<string, unknown>) {
  return { ...passport, ...(events ? { log: events } : {}), ...(as_of ? { as_of } : {}), ...(Array.isArray(disclosures) && disclosures.length > 0 ? { disclosures } : {}) };
}

export function eventVariables({ params, body }: RouteRequest) {
  const input = object(body);
  return { passportId: params.id, type: input.type, payload: input.payload };
}

export function profileVariables({ body }: RouteRequest) {
  const input = object(body);
  return {
    input: {
      id: input.profile_id,
      description: input.description,
      capabilityClasses: input.capability_classes,
      defaultCapabilityClass: input.default_capability_class,
      claims: input.claims,
      audiences: input.audiences,
    },
  };
}

export function applicabilityVariables({ body }: RouteRequest) {
  const input = object(body);
  return { input: { modelId: input.model_id, modelVersion: input.model_version, profileId: input.profile_id } };
}

/** An upsert's answer: 201 with what was made, or 200 with what was replaced. */
export function upserted({ created, ...record }: Record<string, unknown>) {
  return { status: created ? 201 : 200, body: record };
}

export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream';

/** How long an EventSource waits before it reconnects after the stream ends (SSE `retry:`). */
const RECONNECT_MS = 1_000;

/**
 * The variables of a passport's event stream: where it resumes, Last-Event-ID (an EventSource
 * reconnecting) before `after` (a first connection). Refused 406 unless the client accepts an event stream.
 */
export function eventStreamVariables(request: RouteRequest): Record<string, unknown> {
  if (!new Negotiator({ headers: { accept: request.accept ?? '*/*' } }).mediaType([EVENT_STREAM_MEDIA_TYPE])) {
    throw new RequestProblem(problem(406, 'NOT_ACCEPTABLE', "A passport's events are served as an event stream: send Accept: text/event-stream."));
  }
  return { id: request.params.id, after: request.lastEventId ?? request.query.after ?? null };
}

/** A passport's events as Server-Sent Events: each signed record as `data`, its cursor as `id`; first the reconnection delay. */
export function passportEventStream(data: Record<string, any>, context: RouteContext): RouteResult {
  if (!data.events) throw passportNotFound();
  const variables = eventStreamVariables(context.request);
  const encoder = new TextEncoder();
  async function* stream(): AsyncGenerator<Uint8Array> {
    yield encoder.encode(`retry: ${RECONNECT_MS}\n\n`);
    for await (const { event } of context.subscribe(PASSPORT_EVENTS, variables)) {
      yield encoder.encode(`id: ${event.cursor}\ndata: ${JSON.stringify(event.record)}\n\n`);
    }
  }
  // Proxies must pass each event on as it comes (nginx buffers unless told).
  return { headers: { 'content-type': EVENT_STREAM_MEDIA_TYPE, 'cache-control': 'no-store', 'x-accel-buffering': 'no' }, stream: stream() };
}
