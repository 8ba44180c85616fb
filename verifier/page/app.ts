/**
 * The verification page: reads a passport's QR code (camera or image), undoes the pack's layers
 * with the issuer's own format code (lib/formats), verifies the COSE ES256 carrier signature and
 * the delegation path to a pinned root with WebCrypto, and says what that means. Nothing scanned
 * leaves the device: the pinned anchor bundle is fetched on every visit, and the signed trust path
 * material of a key only when a pack signed by it is checked (the kid, a public key's thumbprint,
 * is all the platform learns); both are cached for offline use, so the first visit costs the same
 * whatever the size of the trust graph.
 */
import { canonicalBytes } from '../../lib/crypto/jcs.js';
import { decodeBase45 } from '../../lib/formats/issuer/base45.js';
import { decodeInflatedPack, MAX_INFLATED_BYTES, PACK_PREFIX, type DecodedPack, type PackClaims } from '../../lib/formats/issuer/pack.js';

/** A bundle older than this no longer vouches for anything: revocations since then are unknown. */
export const BUNDLE_MAX_AGE_DAYS = 7;
const DAY_MS = 86_400_000;
const PINNED_KIDS = 'passport-verify.pinned-trust-kids';
/** Cache Storage of the trust path material fetched so far, one entry per key; sw.js leaves it alone. */
const PATH_CACHE = 'passport-verify-paths';
/** Every node key's kid is its RFC 7638 thumbprint: anything else names no key the platform vouches for. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

type Jwk = { kty: string; crv: string; x: string; y?: string; kid: string; iat?: number; exp?: number; revoked?: { revoked_at: number; reason: string } };
interface GraphNode {
  id: string;
  kind: string;
  jurisdiction?: string | null;
  keys: Jwk[];
}
interface GraphEdge {
  id: string;
  iss: string;
  sub: string;
  credential: string | Record<string, unknown>;
}
interface Revocation {
  subject: string;
  reason: string;
  effective_at: string;
}
interface PinnedMaterial {
  anchor_bundle: { issued_at: string; roots: { id: string; jurisdiction?: string; keys: Jwk[] }[]; signature: string; [member: string]: unknown };
  trust_keyring: { keys: Jwk[] };
}
/** The part of the trust graph that decides one key's standing, as the trust service signs it (GET /trust/keys/{kid}/path). */
interface TrustPart {
  nodes: GraphNode[];
  edges: GraphEdge[];
  revocations: Revocation[];
}
interface Anchors {
  material: PinnedMaterial;
  kid: string;
  /** The trust service's key that verified the bundle (its kid its thumbprint): it must sign the path material too. */
  key: Jwk;
  issuedAt: Date;
  ageDays: number;
  expired: boolean;
}

type Failure = 'UNREADABLE_CODE' | 'UNKNOWN_ISSUER' | 'BAD_SIGNATURE' | 'REVOKED_KEY' | 'EXPIRED_BUNDLE' | 'NO_BUNDLE' | 'BAD_TRUST_PATH' | 'NO_TRUST_PATH';
const FAILURE_HEADLINES: Record<Failure, string> = {
  UNREADABLE_CODE: 'Unreadable code',
  UNKNOWN_ISSUER: 'Unknown issuer',
  BAD_SIGNATURE: 'Bad signature',
  REVOKED_KEY: 'Revoked key',
  EXPIRED_BUNDLE: 'Expired bundle',
  NO_BUNDLE: 'No trust anchors',
  BAD_TRUST_PATH: 'Altered trust path',
  NO_TRUST_PATH: 'Trust path not on this device',
};

class Refusal extends Error {
  constructor(
    readonly code: Failure,
    message: string,
    readonly claims?: PackClaims,
  ) {
    super(message);
  }
}

// ---- bytes and signatures (WebCrypto) ----

const utf8 = new TextEncoder();

function base64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError('not base64url');
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** RFC 7638 thumbprint: the kid every service gives its keys. */
async function thumbprint(jwk: Jwk): Promise<string> {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8.encode(JSON.stringify(members)))));
}

async function verifyWith(jwk: Jwk, signature: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const ec = jwk.kty === 'EC';
  const algorithm = ec ? { name: 'ECDSA', namedCurve: 'P-256' } : { name: 'Ed25519' };
  const publicJwk: JsonWebKey = ec ? { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y } : { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  try {
    const key = await crypto.subtle.importKey('jwk', publicJwk, algorithm, false, ['verify']);
    return await crypto.subtle.verify(ec ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'Ed25519' }, key, signature, data);
  } catch {
    return false;
  }
}

/** A JWS (compact, or detached over the JCS form of a signed JSON document): the kid that verified it and its claims, or undefined. */
async function verifyJws(signed: string | Record<string, unknown>, keys: readonly Jwk[]): Promise<{ kid: string; claims: Record<string, unknown> } | undefined> {
  let protectedPart: string, payloadPart: string, signaturePart: string, claims: Record<string, unknown>;
  try {
    if (typeof signed === 'string') {
      [protectedPart = '', payloadPart = '', signaturePart = ''] = signed.split('.');
      claims = JSON.parse(new TextDecoder().decode(base64Url(payloadPart))) as Record<string, unknown>;
    } else {
      const { signature, ...rest } = signed;
      if (typeof signature !== 'string') return undefined;
      [protectedPart = '', , signaturePart = ''] = signature.split('.');
      payloadPart = toBase64Url(canonicalBytes(rest));
      claims = rest;
    }
    const header = JSON.parse(new TextDecoder().decode(base64Url(protectedPart))) as { alg?: string; kid?: string };
    const key = keys.find((candidate) => candidate.kid === header.kid);
    if (!key) return undefined;
    const fits = key.kty === 'EC' ? header.alg === 'ES256' : header.alg === 'Ed25519' || header.alg === 'EdDSA';
    if (!fits || !(await verifyWith(key, base64Url(signaturePart), utf8.encode(`${protectedPart}.${payloadPart}`)))) return undefined;
    return { kid: key.kid, claims };
  } catch {
    return undefined;
  }
}

// ---- the pinned anchor bundle ----

function pinnedKids(): Set<string> {
  try {
    return new Set(JSON.parse(localStorage.getItem(PINNED_KIDS) ?? '[]') as string[]);
  } catch {
    return new Set();
  }
}

/** Checks the bundle's signature under the trust service's key; the first key seen on this device is pinned (trust on first use). */
async function checkAnchors(material: PinnedMaterial, now: Date): Promise<Anchors> {
  const keys: Jwk[] = [];
  for (const key of material.trust_keyring?.keys ?? []) if ((await thumbprint(key)) === key.kid) keys.push(key);
  // A key's path material is signed by the same key: a bundle has roots and no type.
  const bundle = material.anchor_bundle as unknown as Record<string, unknown> | undefined;
  const verified = bundle && Array.isArray(bundle.roots) && bundle.type === undefined ? await verifyJws(bundle, keys) : undefined;
  if (!verified) throw new Refusal('NO_BUNDLE', "The trust anchor bundle does not verify under the trust service's keys: it was altered or is not the platform's.");
  const pinned = pinnedKids();
  if (pinned.size > 0 && !pinned.has(verified.kid)) throw new Refusal('NO_BUNDLE', `The trust anchor bundle is signed by key ${verified.kid}, which this device has not pinned.`);
  if (pinned.size === 0) localStorage.setItem(PINNED_KIDS, JSON.stringify([verified.kid]));
  const issuedAt = new Date(material.anchor_bundle.issued_at);
  const ageDays = (now.getTime() - issuedAt.getTime()) / DAY_MS;
  return { material, kid: verified.kid, key: keys.find((key) => key.kid === verified.kid)!, issuedAt, ageDays, expired: !(ageDays <= BUNDLE_MAX_AGE_DAYS) };
}

// ---- the trust path material of a key ----

/** The path material of a key: fetched while the network answers (and kept), else the copy kept on this device. */
async function fetchTrustPart(kid: string): Promise<unknown> {
  const url = new URL(`keys/${kid}.json`, location.href).href;
  const cache = 'caches' in globalThis ? await caches.open(PATH_CACHE).catch(() => undefined) : undefined;
  let response: Response | undefined;
  try {
    response = await fetch(url, { cache: 'no-store' });
  } catch {
    // Offline: the copy kept below, if this key was ever checked here.
  }
  if (response?.ok) {
    await cache?.put(url, response.clone()).catch(() => undefined);
    return response.json();
  }
  const kept = await cache?.match(url);
  if (kept) return kept.json();
  throw new Refusal(
    'NO_TRUST_PATH',
    response
      ? `The trust path of key ${kid} could not be loaded (HTTP ${response.status}).`
      : `This device has not yet fetched the trust path of key ${kid}, and the platform cannot be reached. Connect to the network once and scan again; from then on this issuer's passports verify offline.`,
  );
}

/**
 * The signed part of the graph that decides the key's standing: signed by the trust key pinned with
 * the bundle, about this kid, and no older than a bundle may be (it carries the revocations the
 * verdict relies on).
 */
async function trustPartOf(kid: string, anchors: Anchors, now: Date, claims: PackClaims): Promise<TrustPart> {
  const document = (await fetchTrustPart(kid)) as Record<string, unknown>;
  const verified = typeof document === 'object' && document !== null ? await verifyJws(document, [anchors.key]) : undefined;
  const { claims: part } = verified ?? {};
  if (part?.type !== 'key-path' || part.kid !== kid || ![part.nodes, part.edges, part.revocations].every(Array.isArray)) {
    throw new Refusal(
      'BAD_TRUST_PATH',
      `The trust path material for key ${kid} does not verify under the trust service's pinned key ${anchors.kid}: it was altered or is not the platform's. Do not trust this passport.`,
      claims,
    );
  }
  const ageDays = (now.getTime() - Date.parse(String(part.issued_at))) / DAY_MS;
  if (!(ageDays <= BUNDLE_MAX_AGE_DAYS)) {
    throw new Refusal(
      'EXPIRED_BUNDLE',
      `The trust path material for key ${kid} on this device is ${Math.floor(ageDays)} days old, older than ${BUNDLE_MAX_AGE_DAYS} days: revocations since then are unknown. Connect to the network once and scan again.`,
      claims,
    );
  }
  return part as unknown as TrustPart;
}

// ---- the pack ----

async function inflate(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    // The same decompression-bomb guard as the issuer's decoder.
    if (total > MAX_INFLATED_BYTES) {
      await reader.cancel();
      throw new Error(`more than ${MAX_INFLATED_BYTES} bytes inflated`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) out.set(chunk, (at += chunk.length) - chunk.length);
  return out;
}

async function decodeText(text: string): Promise<DecodedPack> {
  if (!text.startsWith(PACK_PREFIX)) throw new Refusal('UNREADABLE_CODE', `This QR code is not a product passport (it does not start with ${PACK_PREFIX}).`);
  try {
    return decodeInflatedPack(await inflate(new Uint8Array(decodeBase45(text.slice(PACK_PREFIX.length)))));
  } catch (error) {
    throw new Refusal('UNREADABLE_CODE', `The passport code is damaged and cannot be read (${(error as Error).message}).`);
  }
}

const seconds = (value: unknown): number | undefined => (typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) / 1000 : undefined);

function keyProblem(key: Jwk, at: number): string | undefined {
  if (key.iat !== undefined && key.iat > at) return `key ${key.kid} was issued after the pack was signed`;
  if (key.exp !== undefined && key.exp <= at) return `key ${key.kid} was retired before the pack was signed`;
  return undefined;
}

interface Verdict {
  claims: PackClaims;
  kid: string;
  issuer: GraphNode;
  path: string[];
  logHead: 'verified' | 'absent' | 'not checked';
  revokedLater?: string;
}

async function verifyPackText(text: string, anchors: Anchors, now: Date): Promise<Verdict> {
  const decoded = await decodeText(text);
  const { claims, kid } = decoded;
  if (anchors.expired) {
    throw new Refusal(
      'EXPIRED_BUNDLE',
      `The trust anchor bundle is ${Math.floor(anchors.ageDays)} days old, older than ${BUNDLE_MAX_AGE_DAYS} days: revocations since then are unknown. Connect to the network once and fetch the latest bundle.`,
      claims,
    );
  }
  if (!THUMBPRINT.test(kid)) throw new Refusal('UNKNOWN_ISSUER', `The passport was signed with key ${kid}, which is not a key thumbprint: nobody this device trusts holds such a key.`, claims);
  const graph = await trustPartOf(kid, anchors, now, claims);
  const holders = graph.nodes.filter((node) => node.keys.some((key) => key.kid === kid && key.kty === 'EC'));
  if (holders.length === 0)
    throw new Refusal(
      'UNKNOWN_ISSUER',
      `The passport was signed with key ${kid}, which no issuer in the trust anchor bundle holds. It may be genuine elsewhere, but nobody this device trusts vouches for it.`,
      claims,
    );
  const carrierKey = holders[0]!.keys.find((key) => key.kid === kid)!;
  if ((await thumbprint(carrierKey)) !== kid || !(await verifyWith(carrierKey, new Uint8Array(decoded.cose.signature), new Uint8Array(decoded.cose.signed_bytes)))) {
    throw new Refusal('BAD_SIGNATURE', `The signature does not match the passport's content: the code was altered after it was signed, or forged. Do not trust it.`, claims);
  }
  const revocation = (subjects: string[]) => graph.revocations.find((entry) => subjects.includes(entry.subject) && (seconds(entry.effective_at) ?? Infinity) <= claims.iat);
  const chain = await trustPath(holders, graph, anchors, claims.iat);
  if (!chain) throw new Refusal('UNKNOWN_ISSUER', `Key ${kid} belongs to ${holders.map((node) => node.id).join(', ')}, but no valid delegation leads there from a root this device trusts.`, claims);
  const issuer = graph.nodes.find((node) => node.id === chain.at(-1))!;
  const revoked = revocation([issuer.id, `${issuer.id}#${kid}`]);
  if (revoked) throw new Refusal('REVOKED_KEY', `The issuer's key was revoked from ${revoked.effective_at} (${revoked.reason}), before this passport was signed: do not trust it.`, claims);
  if (carrierKey.revoked && carrierKey.revoked.revoked_at <= claims.iat)
    throw new Refusal('REVOKED_KEY', `The issuer's key was revoked (${carrierKey.revoked.reason}) before this passport was signed: do not trust it.`, claims);
  const lifetime = keyProblem(carrierKey, claims.iat);
  if (lifetime) throw new Refusal('REVOKED_KEY', `The issuer's key was not in force when the passport was signed: ${lifetime}.`, claims);
  let logHead: Verdict['logHead'] = 'absent';
  if (claims.log_head) {
    const head = { passport_id: claims.sub, size: claims.log.size, root_hash: claims.log.root_hash, timestamp: claims.log_head.timestamp, signature: claims.log_head.signature };
    logHead = (await verifyJws(
      head,
      issuer.keys.filter((key) => key.kty === 'OKP'),
    ))
      ? 'verified'
      : 'not checked';
  }
  const later = graph.revocations.find((entry) => [issuer.id, `${issuer.id}#${kid}`].includes(entry.subject));
  return { claims, kid, issuer, path: chain, logHead, ...(later && { revokedLater: `${later.effective_at} (${later.reason})` }) };
}

/** A delegation path from a root of the signed bundle to a node holding the key, every credential verified and in force at `at`. */
async function trustPath(holders: GraphNode[], graph: TrustPart, anchors: Anchors, at: number): Promise<string[] | undefined> {
  const { anchor_bundle: bundle } = anchors.material;
  const roots = new Map(bundle.roots.map((root) => [root.id, root.keys]));
  const keysOf = (id: string) => roots.get(id) ?? graph.nodes.find((node) => node.id === id)?.keys ?? [];
  // A delegation stands only while its issuer does: a node revoked by then delegates nothing (as resolvePath holds).
  const revokedBy = (id: string) => graph.revocations.some((entry) => entry.subject === id && (seconds(entry.effective_at) ?? Infinity) <= at);
  const walk = async (id: string, seen: string[]): Promise<string[] | undefined> => {
    if (roots.has(id)) return [id, ...seen];
    if (seen.length > 8) return undefined;
    for (const edge of graph.edges.filter((candidate) => candidate.sub === id && !seen.includes(candidate.iss) && !revokedBy(candidate.iss))) {
      const verified = await verifyJws(edge.credential, keysOf(edge.iss));
      if (!verified || verified.claims.iss !== edge.iss || verified.claims.sub !== id) continue;
      const from = seconds(verified.claims.nbf ?? verified.claims.iat) ?? -Infinity;
      const until = seconds(verified.claims.exp) ?? Infinity;
      if (from > at || until <= at) continue;
      const found = await walk(edge.iss, [id, ...seen]);
      if (found) return found;
    }
    return undefined;
  };
  for (const holder of holders) {
    const found = await walk(holder.id, []);
    if (found) return found;
  }
  return undefined;
}

// ---- the page ----

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
let anchors: Anchors | undefined;
let anchorsFailure: Refusal | undefined;

function element(tag: string, text?: string, attributes: Record<string, string> = {}): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function list(entries: [string, string][]): HTMLElement {
  const dl = element('dl');
  for (const [term, description] of entries) dl.append(element('dt', term), element('dd', description));
  return dl;
}

const when = (secondsSinceEpoch: number) => new Date(secondsSinceEpoch * 1000).toISOString().replace('.000Z', 'Z');

function claimRows(claims: PackClaims): [string, string][] {
  return [
    ['Passport', claims.sub],
    ['Status when signed', claims.status],
    ['Signed at', when(claims.iat)],
    ['Product model', `${claims.type_ref.id}, version ${claims.type_ref.version}`],
    ...(claims.identity ? ([['Product identity', claims.identity]] as [string, string][]) : []),
    ['Capability class', claims.capability_class],
  ];
}

function showVerdict(verdict: Verdict): void {
  const box = $('verdict');
  box.dataset.state = 'valid';
  const { claims } = verdict;
  const covered = [
    `the passport's claims above, unchanged since signing (ES256 signature by key ${verdict.kid})`,
    `the issuer's key was in force and not revoked when it signed, by the pinned bundle`,
    `the delegation from root ${verdict.path[0]} to ${verdict.issuer.id}`,
    ...(claims.manifest_digest ? [`the digest of the product's manifest (${claims.manifest_digest.slice(0, 16)}…), not its contents`] : []),
    ...(claims.last_event ? [`its latest event then: #${claims.last_event.seq} ${claims.last_event.type} at ${claims.last_event.recorded_at}`] : []),
    ...(verdict.logHead === 'verified' ? [`the signed head of its event log (size ${claims.log.size})`] : []),
  ];
  const notCovered = [
    'whether the status changed after signing: that needs the network (optional, below)',
    'that the product in your hand is the one named: compare the identity with its label',
    ...(verdict.logHead === 'not checked' ? ['the embedded log head: its key is not in the bundle'] : []),
    ...(claims.log_head ? [] : [`the event log itself (class ${claims.capability_class} packs carry no signed log head)`]),
  ];
  const online = element('button', 'Check the current status online', { type: 'button', id: 'latest-check' });
  const onlineResult = element('p', undefined, { id: 'latest-result', role: 'status' });
  online.addEventListener('click', () => void checkLatest(verdict, onlineResult));
  box.replaceChildren(
    element('p', 'Genuine: signed by a trusted issuer', { class: 'headline' }),
    list([['Issued by', `${verdict.issuer.id}${verdict.issuer.jurisdiction ? ` (${verdict.issuer.jurisdiction})` : ''}`], ['Trust path', verdict.path.join(' → ')], ...claimRows(claims)]),
    ...(verdict.revokedLater ? [element('p', `Note: the issuer's key was revoked later, from ${verdict.revokedLater}.`)] : []),
    element('h3', 'What was checked'),
    listOf(covered),
    element('h3', 'What was not checked'),
    listOf(notCovered),
    element('p', "Optional, needs the network: the passport's current status and log head, signed by the issuer.", { class: 'optional' }),
    online,
    onlineResult,
  );
}

/** The optional online step: the latest signed log head, verified here under the issuer's keys, and the status now. */
async function checkLatest(verdict: Verdict, out: HTMLElement): Promise<void> {
  out.textContent = 'Asking the platform…';
  try {
    const response = await fetch(`latest/${encodeURIComponent(verdict.claims.sub)}`, { cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const latest = (await response.json()) as { status: string; log_head: Record<string, unknown> } | null;
    if (!latest) return void (out.textContent = 'The platform does not know this passport any more.');
    const head = await verifyJws(
      latest.log_head,
      verdict.issuer.keys.filter((key) => key.kty === 'OKP'),
    );
    if (!head || head.claims.passport_id !== verdict.claims.sub) return void (out.textContent = "The platform's answer is not signed by this issuer: ignore it.");
    const size = Number(head.claims.size);
    const grown = size - verdict.claims.log.size;
    out.textContent = `Now: status ${latest.status}; the signed log holds ${size} events${grown > 0 ? `, ${grown} more than when the code was signed` : ', as when the code was signed'}.`;
  } catch (error) {
    out.textContent = `The online check failed (${(error as Error).message}); the offline verdict above stands.`;
  }
}

function listOf(items: string[]): HTMLElement {
  const ul = element('ul');
  for (const item of items) ul.append(element('li', item));
  return ul;
}

function showRefusal(refusal: Refusal): void {
  const box = $('verdict');
  box.dataset.state = 'invalid';
  box.dataset.code = refusal.code;
  box.replaceChildren(
    element('p', `Not verified: ${FAILURE_HEADLINES[refusal.code]}`, { class: 'headline' }),
    element('p', refusal.message),
    ...(refusal.claims ? [element('p', 'What the code claims, unconfirmed:'), list(claimRows(refusal.claims))] : []),
  );
}

async function verifyText(text: string | undefined): Promise<void> {
  const box = $('verdict');
  delete box.dataset.code;
  try {
    if (text === undefined) throw new Refusal('UNREADABLE_CODE', 'No QR code could be read from this image. Try a sharper, well-lit picture that shows the whole code.');
    if (!anchors) throw anchorsFailure ?? new Refusal('NO_BUNDLE', 'The trust anchor bundle is not loaded yet.');
    const now = new Date();
    anchors = await checkAnchors(anchors.material, now);
    showAnchors();
    showVerdict(await verifyPackText(text, anchors, now));
  } catch (error) {
    showRefusal(error instanceof Refusal ? error : new Refusal('UNREADABLE_CODE', `The code could not be checked: ${(error as Error).message}`));
  }
}

type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const readQr = (image: ImageData): string | undefined => (globalThis as unknown as { jsQR: JsQr }).jsQR(image.data, image.width, image.height)?.data;

async function readImageFile(file: File): Promise<string | undefined> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return undefined;
  }
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext('2d')!;
  context.drawImage(bitmap, 0, 0);
  return readQr(context.getImageData(0, 0, bitmap.width, bitmap.height));
}

let stream: MediaStream | undefined;

async function startCamera(): Promise<void> {
  const video = $<HTMLVideoElement>('camera');
  const status = $('camera-status');
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } });
  } catch (error) {
    status.textContent = `The camera is not available (${(error as Error).name}). Open an image of the QR code instead.`;
    return;
  }
  video.srcObject = stream;
  video.hidden = false;
  $('camera-stop').hidden = false;
  $('camera-start').hidden = true;
  await video.play();
  status.textContent = 'Point the camera at the QR code.';
  const canvas = new OffscreenCanvas(1, 1);
  const context = canvas.getContext('2d', { willReadFrequently: true })!;
  const scan = () => {
    if (!stream) return;
    if (video.videoWidth > 0) {
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      context.drawImage(video, 0, 0);
      const text = readQr(context.getImageData(0, 0, canvas.width, canvas.height));
      if (text) {
        stopCamera();
        status.textContent = 'QR code read.';
        void verifyText(text);
        return;
      }
    }
    requestAnimationFrame(scan);
  };
  requestAnimationFrame(scan);
}

function stopCamera(): void {
  for (const track of stream?.getTracks() ?? []) track.stop();
  stream = undefined;
  $<HTMLVideoElement>('camera').hidden = true;
  $('camera-stop').hidden = true;
  $('camera-start').hidden = false;
  $('camera-start').focus();
}

function showAnchors(): void {
  const box = $('anchors');
  if (!anchors) {
    box.dataset.state = 'invalid';
    box.replaceChildren(element('p', anchorsFailure?.message ?? 'No trust anchor bundle.'));
    return;
  }
  const { material, kid, issuedAt, ageDays, expired } = anchors;
  box.dataset.state = expired ? 'warning' : 'valid';
  const age = ageDays < 1 ? `${Math.max(0, Math.round(ageDays * 24))} hours` : `${Math.floor(ageDays)} days`;
  box.replaceChildren(
    element('p', expired ? `Expired bundle: ${age} old, more than ${BUNDLE_MAX_AGE_DAYS} days` : `Signature verified; ${age} old`, { class: 'headline' }),
    list([
      ['Issued', issuedAt.toISOString()],
      ['Signed by', `trust service key ${kid}`],
      ['Roots', material.anchor_bundle.roots.map((root) => root.id).join(', ') || 'none'],
      ['Issuers', "each issuer's signed trust path is fetched with its first passport checked here, and kept for offline use"],
    ]),
  );
}

async function loadAnchors(): Promise<void> {
  try {
    // The bundle is small and signed anew on every visit; the trust graph is never fetched whole,
    // only the path material of the key a pack names (trustPartOf).
    const bundle = await fetch('anchors.json', { cache: 'no-store' });
    if (!bundle.ok) throw new Refusal('NO_BUNDLE', `The trust anchor bundle could not be loaded (HTTP ${bundle.status}).`);
    const material = (await bundle.json()) as PinnedMaterial;
    anchors = await checkAnchors(material, new Date());
    anchorsFailure = undefined;
  } catch (error) {
    // Keep a bundle already loaded: a failed refresh must not undo it.
    anchorsFailure = error instanceof Refusal ? error : new Refusal('NO_BUNDLE', `The trust anchor bundle could not be loaded: ${(error as Error).message}`);
  }
  showAnchors();
  $('anchors').dataset.loaded = anchors ? 'yes' : 'no';
}

$('camera-start').addEventListener('click', () => void startCamera());
$('camera-stop').addEventListener('click', stopCamera);
$('anchors-refresh').addEventListener('click', () => void loadAnchors());
$<HTMLInputElement>('image-input').addEventListener('change', async (event) => {
  const input = event.target as HTMLInputElement;
  const file = input.files?.[0];
  if (!file) return;
  await verifyText(await readImageFile(file));
  input.value = '';
});
if ('serviceWorker' in navigator) void navigator.serviceWorker.register('sw.js').catch(() => undefined);
void loadAnchors();
