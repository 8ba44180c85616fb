import { describe, expect, it } from 'vitest';
import { buildBag, SNAPSHOT_FILES, snapshotBag, snapshotPayload, type PayloadFile, type SnapshotContent } from '../../../subgraphs/archive/domain/index.js';
import { bagFromTar, parseBagInfo, validateBag } from '../support/bagit-check.js';
import { syntheticPassport } from '../support/synthetic-passport.js';

const decoder = new TextDecoder();

async function contentOf(file: PayloadFile): Promise<Uint8Array> {
  if ('bytes' in file) return file.bytes;
  const chunks: Uint8Array[] = [];
  for await (const chunk of file.open()) chunks.push(chunk);
  const joined = Buffer.concat(chunks);
  expect(joined.length).toBe(file.size);
  return joined;
}

function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([key, member]) => [key, reversedKeys(member)]),
  );
}

const options = (content: SnapshotContent) => ({
  snapshotId: 'snap-7f3a',
  baggedAt: '2025-06-01T08:00:00Z',
  content,
  sourceOrganization: 'Passport Archive',
  softwareAgent: 'passport-archive/0.1.0',
});

describe('snapshot payload', () => {
  it('lays out every part under data/ at the documented paths', () => {
    const paths = snapshotPayload(syntheticPassport(3))
      .map((file) => file.path)
      .sort();
    expect(paths).toEqual(SNAPSHOT_FILES.map((file) => file.path).sort());
    expect(SNAPSHOT_FILES.map((file) => file.path)).toEqual([...SNAPSHOT_FILES.map((file) => file.path)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });

  it('leaves out pack.txt, and its description, when no pack was minted', async () => {
    const files = snapshotPayload(syntheticPassport(3, { withPack: false }));
    expect(files.map((file) => file.path)).not.toContain('data/passport/pack.txt');
    const table = JSON.parse(decoder.decode(await contentOf(files.find((file) => file.path === 'data/representation-information.json')!)));
    expect(table.files.map((entry: { path: string }) => entry.path).sort()).toEqual(files.map((file) => file.path).sort());
  });

  it('writes each JSON part so that it parses back to the input and does not depend on member order', async () => {
    const content = syntheticPassport(5);
    const reordered = reversedKeys(content) as SnapshotContent;
    const files = snapshotPayload(content);
    const again = snapshotPayload(reordered);
    for (const [index, file] of files.entries()) {
      expect(Buffer.compare(await contentOf(file), await contentOf(again[index]!))).toBe(0);
    }
    const byPath = new Map(await Promise.all(files.map(async (file) => [file.path, decoder.decode(await contentOf(file))] as const)));
    expect(JSON.parse(byPath.get('data/passport/core.json')!)).toEqual(content.core);
    expect(JSON.parse(byPath.get('data/keys/issuer-keyring.json')!)).toEqual(content.keys.issuerKeyring);
    expect(byPath.get('data/passport/verdict.json')!.startsWith('{"coverage":')).toBe(true);
    expect(byPath.get('data/passport/core.json')!.endsWith('}')).toBe(true);
    expect(byPath.get('data/passport/pack.txt')).toBe(content.pack);
  });

  it('writes the event log as one JSON line per event, in log order, in bounded chunks', async () => {
    const content = syntheticPassport(2000);
    const events = snapshotPayload(content).find((file) => file.path === 'data/passport/events.jsonl')!;
    expect('open' in events).toBe(true);
    const chunks: Uint8Array[] = [];
    for await (const chunk of (events as Extract<PayloadFile, { open: unknown }>).open()) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(64 * 1024);
    const text = decoder.decode(Buffer.concat(chunks));
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual(content.events);
  });

  it('builds a valid bag named after the snapshot, identifying the passport', async () => {
    const content = syntheticPassport(50);
    const { bytes } = await buildBag(snapshotBag(options(content)));
    const { name, bag } = bagFromTar(bytes);
    expect(name).toBe('snap-7f3a');
    expect(validateBag(bag)).toEqual([]);
    const info = parseBagInfo(bag.files.get('bag-info.txt')!);
    expect(info.get('External-Identifier')).toEqual([content.passportId]);
    expect(info.get('Internal-Sender-Identifier')).toEqual(['snap-7f3a']);
    expect(info.get('Bagging-Date')).toEqual(['2025-06-01']);
    expect(info.get('Bag-Software-Agent')).toEqual(['passport-archive/0.1.0']);
  });

  it('gives the same bytes for the same content gathered twice', async () => {
    const first = await buildBag(snapshotBag(options(syntheticPassport(300))));
    const second = await buildBag(snapshotBag(options(reversedKeys(syntheticPassport(300)) as SnapshotContent)));
    expect(Buffer.compare(first.bytes, second.bytes)).toBe(0);
  });

  it.each([
    ['a missing verdict', { verdict: undefined }],
    ['a verdict that is not an object', { verdict: [1] }],
    ['a missing keyring', { keys: { issuerKeyring: {}, trustAnchorBundle: {} } }],
    ['an event with a non-finite number', { events: [{ seq: Number.NaN }] }],
    ['events that are not a list', { events: {} }],
    ['an empty pack', { pack: '' }],
    ['an empty passport id', { passportId: '' }],
  ])('refuses content with %s', (_, change) => {
    const content = { ...syntheticPassport(2), ...change } as unknown as SnapshotContent;
    expect(() => snapshotPayload(content)).toThrow(expect.objectContaining({ code: 'INVALID_SNAPSHOT_CONTENT' }));
  });
});
