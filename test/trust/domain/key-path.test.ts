/** The trust path material of one key (domain/key-path.ts): its document, and the kids it refuses. */
import { describe, expect, it } from 'vitest';
import { buildKeyPathMaterial } from '../../../subgraphs/trust/domain/index.js';
import { instantOf } from '../../../lib/formats/trust/time.js';

const KID = 'yXxilhijMrYkdt9l6i-P40VYrSL318Mou92iSac463o';
const AT = instantOf(new Date('2026-11-27T08:00:00Z'));

describe('buildKeyPathMaterial', () => {
  it("is the key's part of the graph, typed and named by its kid, stamped with the time it was read", () => {
    const node = { id: 'acme', kind: 'issuer' as const, keys: [] };
    const built = buildKeyPathMaterial(KID, { nodes: [node], edges: [] }, AT);
    expect(built).toEqual({ ok: true, value: { type: 'key-path', kid: KID, issued_at: '2026-11-27T08:00:00.000Z', nodes: [node], edges: [], revocations: [] } });
  });

  it('refuses a kid that is not an RFC 7638 thumbprint (43 base64url characters)', () => {
    for (const kid of ['', 'short', `${KID}A`, `${KID.slice(0, 42)}=`, `${KID.slice(0, 42)}/`]) {
      const built = buildKeyPathMaterial(kid, { nodes: [], edges: [] }, AT);
      expect(built.ok, kid).toBe(false);
      expect(built.ok ? undefined : built.code).toBe('INVALID_QUERY');
    }
  });
});
