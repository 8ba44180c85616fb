import { describe, expect, it } from 'vitest';
import {
  KIND_COLLECTIONS,
  RESERVED_ROOT_IDS,
  RegistryError,
  assertVersionableThroughApi,
  checkRecordId,
  formatRecordRef,
  isValidRecordId,
  kindOfCollection,
  parseRecordRef,
} from '../../../subgraphs/registry/domain/index.js';
import { registryErrorOf } from './helpers.js';

const codeOf = (action: () => unknown): string => registryErrorOf(action).code;

describe('record identifiers', () => {
  it('accepts lower-case URL-safe ids up to 128 characters', () => {
    for (const id of ['a', '0', 'battery-passport', 'battery.ev', 'gs1_mapping-2', 'a'.repeat(128)]) {
      expect(isValidRecordId(id), id).toBe(true);
      expect(encodeURIComponent(id)).toBe(id);
    }
  });

  it('refuses ids that are empty, too long, upper-case, dot segments or need escaping', () => {
    for (const id of ['', 'a'.repeat(129), 'Battery', '.', '..', '-a', 'a-', 'a.', 'a b', 'a/b', 'a%2F', 'é', 'a@1', 'a?b', 'a#b']) {
      expect(
        codeOf(() => checkRecordId(id, 'item')),
        JSON.stringify(id),
      ).toBe('INVALID_ID');
    }
    expect(codeOf(() => checkRecordId(42, 'item'))).toBe('INVALID_ID');
  });

  it("reserves every fixed root path of the specification's registry service for generic records", () => {
    // The registry table of the specification: GET/POST /, /admin/log, /admin/seed, /applicability,
    // the six collections, /healthz, /schemas/profile-manifest.
    const specRootSegments = ['admin', 'applicability', 'cross-register-mappings', 'healthz', 'items', 'models', 'protocol-bindings', 'schemas', 'services', 'verification-mechanisms'];
    for (const id of specRootSegments) {
      expect(RESERVED_ROOT_IDS).toContain(id);
      expect(
        codeOf(() => checkRecordId(id, 'generic')),
        id,
      ).toBe('RESERVED_ID');
      // Inside a collection the same name shadows nothing.
      expect(checkRecordId(id, 'item')).toBe(id);
    }
    for (const id of ['graphql', 'docs', 'keyring']) expect(codeOf(() => checkRecordId(id, 'generic'))).toBe('RESERVED_ID');
    expect(checkRecordId('eu-battery-passport', 'generic')).toBe('eu-battery-passport');
  });

  it('maps RESERVED_ID and INVALID_ID to client error statuses', () => {
    expect(new RegistryError('RESERVED_ID', 'x').status).toBe(422);
    expect(new RegistryError('INVALID_ID', 'x').status).toBe(400);
    expect(new RegistryError('STALE_VERSION', 'x').status).toBe(409);
  });
});

describe('kinds', () => {
  it('maps collection paths to kinds and back', () => {
    for (const [kind, path] of Object.entries(KIND_COLLECTIONS)) expect(kindOfCollection(path)).toBe(kind);
    expect(kindOfCollection('generic')).toBeUndefined();
  });

  it('offers API versioning exactly for items, services, cross-register mappings and generic records', () => {
    for (const kind of ['item', 'service', 'cross_register_mapping', 'generic'] as const) {
      expect(() => assertVersionableThroughApi(kind)).not.toThrow();
    }
    for (const kind of ['model', 'protocol_binding', 'verification_mechanism'] as const) {
      expect(codeOf(() => assertVersionableThroughApi(kind))).toBe('NOT_VERSIONABLE');
    }
  });
});

describe('record references', () => {
  it('parses and formats id@version', () => {
    expect(parseRecordRef('battery-passport@12')).toEqual({ id: 'battery-passport', version: 12 });
    expect(formatRecordRef({ id: 'battery.ev', version: 1 })).toBe('battery.ev@1');
  });

  it('refuses malformed references', () => {
    for (const ref of ['battery-passport', 'battery-passport@0', 'battery-passport@01', '@1', 'Battery@1', 'a@1@2', 'a@-1', 'a@1.5']) {
      expect(
        codeOf(() => parseRecordRef(ref)),
        ref,
      ).toBe('INVALID_REF');
    }
  });
});
