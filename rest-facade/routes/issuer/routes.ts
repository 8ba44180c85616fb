/** The issuer's paths (spec §4, issuer table) beyond the common ones: passports, their logs, packs and verdicts, and administration. */
import { hasRestrictedMembers, MAX_PASSPORTS_PER_CREATION } from '../../../lib/formats/issuer/index.js';
import type { Route } from '../../route-table.js';
import { location } from '../../schemas.js';
import { credentialRoutes } from '../credentials/routes.js';
import { digitalLinkRoutes } from '../digital-link/routes.js';
import { operatorRoutes } from '../operators/routes.js';
import { tokenRoutes } from '../tokens/routes.js';
import {
  applicabilityVariables,
  batchCreationVariables,
  creationVariables,
  eventStreamVariables,
  eventVariables,
  passportEventStream,
  passportNotFound,
  passportOut,
  passportUrl,
  passportVariables,
  profileVariables,
  upserted,
  withLivePassportUrl,
  withLivePassportUrls,
} from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

const passportIdParam = { id: 'The passport id.' };

export const issuerRoutes: Route[] = [
  {
    method: 'POST',
    path: '/passports',
    summary: 'Creates a passport from identity, type ref, config vector and capability class; returns its id and an empty log',
    role: 'writer',
    body: schemas.passportBody,
    operation: operations.CREATE_PASSPORT,
    variables: creationVariables,
    result: (data, context) => ({ status: 201, headers: { location: passportUrl(context, data.passport.passport_id) }, body: { ...passportOut(data.passport), log: [] } }),
    problem: withLivePassportUrl,
    responses: { 201: { headers: location('The passport.'), description: 'The passport, with its empty log and the signed head of that log.', ...schemas.newPassport } },
    problems: [401, 409, 422, 503],
  },
  {
    method: 'POST',
    path: '/passports/batch',
    summary: `Creates up to ${MAX_PASSPORTS_PER_CREATION} passports, each as POST /passports does, all or none: any refused item (or two naming one identity) refuses the whole request with one BATCH_REFUSED problem naming each refused item by its index; answers them in the order given`,
    role: 'writer',
    body: schemas.passportBatchBody,
    operation: operations.CREATE_PASSPORTS,
    variables: batchCreationVariables,
    result: (data) => ({ status: 201, body: { passports: data.passports.map((passport: Record<string, unknown>) => ({ ...passportOut(passport), log: [] })) } }),
    problem: withLivePassportUrls,
    responses: { 201: { description: 'The passports, in the order of the request, each with its empty log and the signed head of that log.', ...schemas.newPassports } },
    problems: [401, 409, 422, 503],
  },
  {
    method: 'GET',
    path: '/passports/{id}',
    summary: 'The core, the manifest (config vector) and the signed log head of a passport; with `at`, as it stood then (EN 18222 ReadDPPVersionByIdAndDate)',
    params: passportIdParam,
    query: {
      include_events: { type: 'boolean', description: 'Also return every signed event, in sequence order, as `log` (with `at`: those recorded up to then).' },
      at: {
        type: 'date-time',
        description:
          'The passport as it stood at this RFC 3339 instant (Z or an offset; inclusive): status, log size and signed log head from its log up to then, and `as_of`. Before its creation: 404 NOT_YET_ISSUED; a future instant answers the state of now.',
      },
      include_proof: { type: 'boolean', description: 'With `at`: also return as_of.consistency_proof, from the head then to today’s signed head (reads the whole log).' },
    },
    operation: operations.PASSPORT,
    variables: passportVariables,
    result: (data) => {
      if (!data.passport) throw passportNotFound();
      // The restricted members shown differ by caller: a cache keeps the views of different tokens apart.
      return { ...(hasRestrictedMembers(data.passport.manifest) ? { headers: { vary: 'authorization' } } : {}), body: passportOut(data.passport) };
    },
    responses: { 200: { description: 'The passport (with `at`: as it stood then).', ...schemas.passport } },
  },
  {
    method: 'POST',
    path: '/passports/{id}/events',
    summary:
      'Appends a typed event; the issuer signs it with Ed25519 and marks it Attested; an illegal status transition is a 409 (rule I6); after a restore, 503 RESTORE_UNACKNOWLEDGED until an admin acknowledges it (POST /admin/restore/acknowledgement)',
    role: 'writer',
    params: passportIdParam,
    body: schemas.eventBody,
    operation: operations.APPEND_EVENT,
    variables: eventVariables,
    // The event has no address of its own: Location names the log that holds it.
    result: (data, context) => ({ status: 201, headers: { location: `${passportUrl(context, context.request.params.id!)}?include_events=true` }, body: data.appended }),
    responses: {
      201: {
        headers: location('The passport with its log (?include_events=true).'),
        description: 'The signed event (seq, prev_hash, trust "Attested", kid, signature), the new signed log head and the status after it.',
        ...schemas.appended,
      },
    },
    problems: [401, 409, 422],
  },
  {
    method: 'GET',
    path: '/passports/{id}/events',
    summary: "The passport's events as Server-Sent Events (Accept: text/event-stream): every event after the cursor, then each new one as it is appended, in log order; resumable with Last-Event-ID",
    params: passportIdParam,
    query: { after: { type: 'string', description: 'Start after the event of this cursor (its seq), as Last-Event-ID does on a reconnection; without either, from the first event.' } },
    operation: operations.EVENTS_AFTER,
    variables: eventStreamVariables,
    result: passportEventStream,
    responses: {
      200: {
        description:
          'An event stream: `retry:` first, then per event `id:` (its cursor, the seq) and `data:` (the signed event, as the log holds it). An EventSource reconnects by itself and sends the last id as Last-Event-ID, so it misses nothing and gets nothing twice; on shutdown the stream ends and the client resumes on the next instance.',
        mediaType: 'text/event-stream',
        schema: { type: 'string' },
        example: 'retry: 1000\n\nid: 0\ndata: {"seq":0,"type":"ObjectEvent","trust":"Attested","kid":"…","signature":"…"}\n\n',
      },
    },
    problems: [406],
  },
  {
    method: 'POST',
    path: '/passports/{id}/pack',
    summary: 'Mints the Tier-A pack (COSE_Sign1, ES256 carrier signature, zlib, Base45) under the QR budget; over budget is a 422',
    role: 'writer',
    params: passportIdParam,
    operation: operations.MINT_PACK,
    variables: ({ params }) => ({ passportId: params.id }),
    // The passport keeps its latest pack (latest_pack).
    result: (data, context) => ({ status: 201, headers: { location: passportUrl(context, context.request.params.id!) }, body: data.pack }),
    responses: {
      201: {
        headers: location('The passport, whose latest_pack is this pack.'),
        description: 'The pack text (DPP1:…), its size and the budget, the carrier key id and the claims.',
        ...schemas.pack,
      },
    },
    problems: [401, 422],
  },
  {
    method: 'GET',
    path: '/passports/{id}/verdict',
    summary: 'The full-pipeline verdict with coverage: log verdict, event-signature audit, Tier-A pack verdict, key standing in the trust service',
    params: passportIdParam,
    operation: operations.VERDICT,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => {
      if (!data.passport) throw passportNotFound();
      return { headers: { 'cache-control': 'no-store' }, body: data.passport.verdict };
    },
    responses: { 200: { description: 'outcome (verified, failed, incomplete), log_verdict, event_signature_audit, pack_verdict, checks and coverage.', ...schemas.verdict } },
  },
  ...credentialRoutes,
  {
    method: 'POST',
    path: '/admin/profiles',
    summary: 'Creates or replaces a profile: the capability classes and claims a type of passport gets at creation',
    role: 'admin',
    body: schemas.profileBody,
    operation: operations.UPSERT_PROFILE,
    variables: profileVariables,
    result: (data) => upserted(data.profile),
    responses: { 200: { description: 'The profile, replaced.', ...schemas.profile }, 201: { description: 'The profile, created.', ...schemas.profile } },
    problems: [401, 403, 422],
  },
  {
    method: 'POST',
    path: '/admin/applicability',
    summary: 'Creates or replaces the rule naming the profile that passports of a registry model (a version, or all) get',
    role: 'admin',
    body: schemas.ruleBody,
    operation: operations.SET_APPLICABILITY,
    variables: applicabilityVariables,
    result: (data) => upserted(data.rule),
    responses: { 200: { description: 'The rule, replaced.', ...schemas.rule }, 201: { description: 'The rule, created.', ...schemas.rule } },
    problems: [401, 403, 422],
  },
  {
    method: 'POST',
    path: '/admin/restore/acknowledgement',
    summary:
      'Acknowledges the restore that holds appends (npm run restore): once the clients are told the last sequence number of each restored passport, appends are taken again; acknowledging again acknowledges none',
    role: 'admin',
    operation: operations.ACKNOWLEDGE_RESTORE,
    result: (data) => ({ body: { acknowledged: data.acknowledged } }),
    responses: {
      200: {
        description: 'The restores acknowledged: one, unless a restore was repeated before it was acknowledged; none when no restore held appends.',
        ...schemas.acknowledged,
      },
    },
    problems: [401, 403],
  },
  ...operatorRoutes,
  ...tokenRoutes,
  ...digitalLinkRoutes,
];
