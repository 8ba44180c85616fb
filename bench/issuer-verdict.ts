/**
 * How long the issuer's log verdict takes over a long log: builds a passport log of N events
 * (default 10,000) with a signed head, then runs verifyLog several times and prints the median.
 *
 *   npx tsx bench/issuer-verdict.ts [events] [runs]
 */
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { canonicalize, ed25519PublicJwk, jwkThumbprint, keySetResolver, type Signer } from '../lib/crypto/index.js';
import { signLogHead } from '../subgraphs/issuer/domain/checkpoint.js';
import { appendEvent, emptyLogState, type EventRecord } from '../subgraphs/issuer/domain/event-log.js';
import { verifyLog } from '../subgraphs/issuer/domain/log-verdict.js';

const size = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 7);

// Node's signer only to build the fixture quickly; verification is what is measured.
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const x = publicKey.export({ format: 'jwk' }).x!;
const jwk = { ...ed25519PublicJwk(Buffer.from(x, 'base64url')) };
const kid = jwkThumbprint(jwk);
const signer: Signer = { kid, alg: 'Ed25519', sign: (data) => nodeSign(null, data, privateKey) };
const resolveKey = keySetResolver([{ ...jwk, kid }]);

const passportId = 'bench-passport';
let state = emptyLogState(passportId);
const events: EventRecord[] = [];
const start = Date.parse('2025-01-01T00:00:00Z');
({ state } = appendEvent(state, { type: 'activated', payload: { placed_on_market_at: '2025-01-01T00:00:00Z' } }, signer, new Date(start)));
events.push(state.last!);
for (let i = 1; i < size; i += 1) {
  const at = new Date(start + i * 1000);
  const appended = appendEvent(
    state,
    {
      type: 'ObjectEvent',
      payload: {
        eventTime: at.toISOString(),
        eventTimeZoneOffset: '+01:00',
        action: 'OBSERVE',
        bizStep: i % 2 === 0 ? 'shipping' : 'receiving',
        disposition: 'in_transit',
        epcList: ['https://id.gs1.org/01/09520123456788/21/SN-0001'],
        readPoint: { id: `urn:epc:id:sgln:9520123.00001.${i % 50}` },
        bizTransactionList: [{ type: 'po', bizTransaction: `urn:epcglobal:cbv:bt:9520123456788:PO-${i}` }],
      },
    },
    signer,
    at,
  );
  state = appended.state;
  events.push(appended.event);
}
const head = signLogHead(passportId, state.frontier, signer, new Date(start + size * 1000));

// The stored texts, as the service hands them in (it reads the events from their canonical text).
const texts = events.map((event) => canonicalize(event));

for (const [label, withTexts] of [['parsed events', false], ['parsed events and their stored texts', true]] as const) {
  const timings: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    const t0 = performance.now();
    const verdict = await verifyLog(events, head, resolveKey, passportId, withTexts ? texts : undefined);
    timings.push(performance.now() - t0);
    if (!verdict.ok || verdict.signatures.verified !== size) throw new Error(`the fixture should verify: ${JSON.stringify(verdict.problems.slice(0, 3))}`);
  }
  timings.sort((a, b) => a - b);
  const median = timings[Math.floor(timings.length / 2)]!;
  console.log(`verifyLog over ${size} ${label}: median ${median.toFixed(1)} ms of ${runs} runs (min ${timings[0]!.toFixed(1)}, max ${timings.at(-1)!.toFixed(1)})`);
}
