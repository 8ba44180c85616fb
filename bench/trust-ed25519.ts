/**
 * Ed25519 verification cost for the master list's quorum verdicts (DESIGN §4 Trust): every read
 * re-verifies every entry, so 1,000 entries with 5 witness cosignatures each must verify in well
 * under a second on two cores. Compares @noble/curves (strict RFC 8032 mode) with lib/crypto's
 * verifyBytes (Node's OpenSSL over cached KeyObjects, small-order keys refused first), which the
 * verdicts use, per 5,000-signature batch; then the domain's quorumVerdict over the same load.
 *
 * Run: node --import tsx bench/trust-ed25519.ts
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { verifyBytes } from '../lib/crypto/index.js';

const WITNESSES = 5;
const ENTRIES = 1_000;
const ROUNDS = 5;

const witnesses = Array.from({ length: WITNESSES }, () => ed25519.keygen());
const cosigned = Array.from({ length: ENTRIES }, (_, entry) => {
  const message = new TextEncoder().encode(`cosignature/v1\ntime 1700000000\nbench\nentry ${entry}\n`);
  return witnesses.map(({ secretKey, publicKey }) => ({ publicKey, message, signature: ed25519.sign(message, secretKey) }));
}).flat();

function noble(): number {
  let valid = 0;
  for (const { publicKey, message, signature } of cosigned) {
    if (ed25519.verify(signature, message, publicKey, { zip215: false })) valid += 1;
  }
  return valid;
}

function native(): number {
  let valid = 0;
  for (const { publicKey, message, signature } of cosigned) {
    if (verifyBytes('Ed25519', publicKey, message, signature)) valid += 1;
  }
  return valid;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function measure(name: string, run: () => number): void {
  run(); // warm-up: JIT, noble's precomputed base-point tables
  const batches: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = process.hrtime.bigint();
    const valid = run();
    batches.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (valid !== cosigned.length) throw new Error(`${name}: only ${valid} of ${cosigned.length} signatures verified`);
  }
  const batch = median(batches);
  console.log(
    `${name.padEnd(28)} median ${batch.toFixed(1).padStart(8)} ms per ${cosigned.length} signatures, ` +
      `${((batch * 1000) / cosigned.length).toFixed(1).padStart(7)} µs each`,
  );
}

console.log(`Node ${process.version}, OpenSSL ${process.versions.openssl}; ${ENTRIES} entries x ${WITNESSES} cosignatures, median of ${ROUNDS}`);
measure('@noble/curves ed25519.verify', noble);
measure('lib/crypto verifyBytes', native);
