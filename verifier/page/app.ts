/**
 * The verification page: reads a passport's QR code (camera or image) and judges it with the
 * verifier library the command line runs (verifier/portable.ts, loaded as /verify/verifier.js,
 * bundled with the browser's primitives), from the anchor bundle fetched on every visit and the
 * signed trust path material of the one key a pack names (the kid, a public key's thumbprint, is
 * all the platform learns). The page itself keeps the trust key it saw first, fetches the material
 * and keeps it for offline use, and tells a person what the verdict means: nothing scanned leaves
 * the device, and the first visit costs the same whatever the size of the trust graph.
 */
import {
  fetchedAnchors,
  isKid,
  latestLogHeadSize,
  PACK_PREFIX,
  packKid,
  TRUST_MATERIAL_MAX_AGE_DAYS,
  verifyPackByTrustPath,
  type Finding,
  type PackClaims,
  type TrustAnchors,
  type TrustPathPackVerification,
} from '../portable.js';

const PINNED_KIDS = 'passport-verify.pinned-trust-kids';
/** Cache Storage of the trust path material fetched so far, one entry per key; sw.js leaves it alone. */
const PATH_CACHE = 'passport-verify-paths';

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

/** A library message as a sentence. */
const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;

// ---- the pinned anchor bundle ----

function pinnedKids(): string[] {
  try {
    return JSON.parse(localStorage.getItem(PINNED_KIDS) ?? '[]') as string[];
  } catch {
    return [];
  }
}

/** The fetched bundle under the trust service's key; the first key seen on this device is pinned (trust on first use). */
function checkAnchors(material: unknown, now: Date): TrustAnchors {
  const checked = fetchedAnchors(material, pinnedKids(), now);
  if (!checked.ok) {
    throw new Refusal('NO_BUNDLE', `${sentence(checked.message)}${checked.code === 'ANCHOR_KEY_NOT_PINNED' ? ' This device keeps the key it saw first.' : ''}`);
  }
  if (pinnedKids().length === 0) localStorage.setItem(PINNED_KIDS, JSON.stringify([checked.anchors.trustKey!.kid]));
  return checked.anchors;
}

const bundleExpired = (anchors: TrustAnchors) =>
  `The trust anchor bundle is ${Math.floor(anchors.ageDays)} days old, older than ${TRUST_MATERIAL_MAX_AGE_DAYS} days: revocations since then are unknown. Connect to the network once and fetch the latest bundle.`;

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

// ---- the verdict, in a person's words ----

/** What a person is told of a failed or unchecked finding of verifyPackByTrustPath. */
function failureOf(finding: Finding): Failure {
  if (finding.check === 'pack.decode') return 'UNREADABLE_CODE';
  if (finding.check.startsWith('anchors')) return finding.code === 'ANCHORS_EXPIRED' ? 'EXPIRED_BUNDLE' : 'NO_BUNDLE';
  if (finding.check === 'trust_path') return finding.code === 'TRUST_PATH_EXPIRED' ? 'EXPIRED_BUNDLE' : 'BAD_TRUST_PATH';
  if (finding.check === 'pack.signature' || finding.check === 'pack.log_head') return 'BAD_SIGNATURE';
  if (['NODE_REVOKED', 'KEY_REVOKED', 'KEY_NOT_CURRENT'].includes(finding.code ?? '')) return 'REVOKED_KEY';
  // No node lists the key, or no delegation path stands to the one that does.
  return 'UNKNOWN_ISSUER';
}

/** The first check that failed, but a revocation before the NO_PATH it causes: the reason a person is given. */
function refusalOf(verification: TrustPathPackVerification, text: string, anchors: TrustAnchors): Refusal {
  const problems = verification.report.findings.filter((finding) => finding.status === 'failed' || finding.status === 'not_checked');
  const finding = problems.find((candidate) => failureOf(candidate) === 'REVOKED_KEY') ?? problems[0]!;
  const { claims, kid } = verification;
  const failure = failureOf(finding);
  const messages: Record<Failure, () => string> = {
    UNREADABLE_CODE: () =>
      text.trim().startsWith(PACK_PREFIX) ? `The passport code is damaged and cannot be read (${finding.message}).` : `This QR code is not a product passport (it does not start with ${PACK_PREFIX}).`,
    NO_BUNDLE: () => `${sentence(finding.message)} Fetch the latest anchor bundle.`,
    EXPIRED_BUNDLE: () => (finding.code === 'ANCHORS_EXPIRED' ? bundleExpired(anchors) : `${sentence(finding.message)} Connect to the network once and scan again.`),
    BAD_TRUST_PATH: () => `${sentence(finding.message)} Do not trust this passport.`,
    UNKNOWN_ISSUER: () =>
      finding.check !== 'pack.issuer'
        ? `No valid delegation leads from a root this device trusts to the holder of key ${kid} (${finding.message}).`
        : isKid(kid ?? '')
          ? `The passport was signed with key ${kid}, which no issuer in the trust anchor bundle holds. It may be genuine elsewhere, but nobody this device trusts vouches for it.`
          : `The passport was signed with key ${kid}, which is not a key thumbprint: nobody this device trusts holds such a key.`,
    BAD_SIGNATURE: () => `The signature does not match the passport's content: the code was altered after it was signed, or forged. Do not trust it.`,
    REVOKED_KEY: () => `The issuer's key was not in force when this passport was signed: ${finding.message}. Do not trust it.`,
    NO_TRUST_PATH: () => finding.message,
  };
  return new Refusal(failure, messages[failure](), claims);
}

// ---- the page ----

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
/** The anchor material last fetched (/verify/anchors.json), and the anchors it gave, checked anew at every verdict. */
let anchorMaterial: unknown;
let anchors: TrustAnchors | undefined;
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

/** A verdict of verifyPackByTrustPath that is valid: the pack, its issuer and the path to it are there. */
type Verdict = Required<Pick<TrustPathPackVerification, 'claims' | 'kid' | 'issuer' | 'path' | 'logHead'>> & Pick<TrustPathPackVerification, 'revokedLater' | 'operator'>;

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
    ...(verdict.logHead === 'not_checked' ? ['the embedded log head: its key is not in the bundle'] : []),
    ...(claims.log_head ? [] : [`the event log itself (class ${claims.capability_class} packs carry no signed log head)`]),
  ];
  const online = element('button', 'Check the current status online', { type: 'button', id: 'latest-check' });
  const onlineResult = element('p', undefined, { id: 'latest-result', role: 'status' });
  online.addEventListener('click', () => void checkLatest(verdict, onlineResult));
  box.replaceChildren(
    element('p', 'Genuine: signed by a trusted issuer', { class: 'headline' }),
    list([
      ['Issued by', `${verdict.operator ? `operator ${verdict.operator}` : verdict.issuer.id}${verdict.issuer.jurisdiction ? ` (${verdict.issuer.jurisdiction})` : ''}`],
      ['Trust path', verdict.path.join(' → ')],
      ...claimRows(claims),
    ]),
    ...(verdict.revokedLater ? [element('p', `Note: the issuer's key was revoked later, from ${verdict.revokedLater.effective_at} (${verdict.revokedLater.reason}).`)] : []),
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
    const latest = (await response.json()) as { status: string; log_head: unknown } | null;
    if (!latest) return void (out.textContent = 'The platform does not know this passport any more.');
    const size = latestLogHeadSize(latest.log_head, verdict.issuer.keys, verdict.claims.sub);
    if (size === undefined) return void (out.textContent = "The platform's answer is not signed by this issuer: ignore it.");
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
    const checked = checkAnchors(anchorMaterial, now);
    anchors = checked;
    showAnchors();
    const kid = packKid(text);
    // Nothing to fetch for a pack that does not decode, names no thumbprint, or meets an expired bundle: the verdict says why.
    const keyPath = kid !== undefined && isKid(kid) && !checked.expired ? await fetchTrustPart(kid) : undefined;
    const verification = verifyPackByTrustPath(text, checked, keyPath, now);
    if (verification.report.verdict !== 'valid') throw refusalOf(verification, text, checked);
    showVerdict(verification as Verdict);
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
  const { pins, trustKey, issuedAt, ageDays, expired } = anchors;
  box.dataset.state = expired ? 'warning' : 'valid';
  const age = ageDays < 1 ? `${Math.max(0, Math.round(ageDays * 24))} hours` : `${Math.floor(ageDays)} days`;
  box.replaceChildren(
    element('p', expired ? `Expired bundle: ${age} old, more than ${TRUST_MATERIAL_MAX_AGE_DAYS} days` : `Signature verified; ${age} old`, { class: 'headline' }),
    list([
      ['Issued', new Date(issuedAt).toISOString()],
      ['Signed by', `trust service key ${trustKey!.kid}`],
      ['Roots', pins.roots!.map((root) => root.id).join(', ') || 'none'],
      ['Issuers', "each issuer's signed trust path is fetched with its first passport checked here, and kept for offline use"],
    ]),
  );
}

async function loadAnchors(): Promise<void> {
  try {
    // The bundle is small and signed anew on every visit; the trust graph is never fetched whole,
    // only the path material of the key a pack names (fetchTrustPart).
    const bundle = await fetch('anchors.json', { cache: 'no-store' });
    if (!bundle.ok) throw new Refusal('NO_BUNDLE', `The trust anchor bundle could not be loaded (HTTP ${bundle.status}).`);
    const material: unknown = await bundle.json();
    anchors = checkAnchors(material, new Date());
    anchorMaterial = material;
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
