import { describe, expect, it } from 'vitest';
import { gs1CheckDigit, validateIdentity } from '../../../subgraphs/issuer/domain/identity.js';

const failure = (uri: string, granularity?: 'model' | 'batch' | 'item') => {
  try {
    validateIdentity(uri, granularity);
  } catch (error) {
    return error as { code: string; details: { reason: string } };
  }
  throw new Error(`${uri} was accepted`);
};

describe('passport identity', () => {
  it('computes GS1 check digits of published GTINs', () => {
    // GS1 example GTINs: 09520123456788 (GS1 Digital Link standard), 4006381333931 (EAN-13 on a Stabilo pen),
    // 036000291452 (UPC-A from GS1 US's check digit example).
    expect(gs1CheckDigit('0952012345678')).toBe(8);
    expect(gs1CheckDigit('400638133393')).toBe(1);
    expect(gs1CheckDigit('03600029145')).toBe(2);
  });

  it('reads the granularity off a GS1 Digital Link', () => {
    expect(validateIdentity('https://id.gs1.org/01/09520123456788')).toMatchObject({ granularity: 'model', gtin: '09520123456788' });
    expect(validateIdentity('https://id.gs1.org/01/09520123456788/10/ABC1')).toMatchObject({ granularity: 'batch', lot: 'ABC1' });
    expect(validateIdentity('https://example.com/01/09520123456788/10/ABC1/21/12345')).toMatchObject({
      granularity: 'item',
      lot: 'ABC1',
      serial: '12345',
      digital_link: 'https://id.gs1.org/01/09520123456788/10/ABC1/21/12345',
    });
  });

  it('accepts a resolver path prefix, shorter GTINs and percent-encoded values', () => {
    const identity = validateIdentity('https://brand.example/dpp/v1/01/4006381333931/21/A%2FB%25', 'item');
    expect(identity).toMatchObject({ gtin: '04006381333931', serial: 'A/B%', scheme: 'gs1-digital-link' });
    expect(identity.digital_link).toBe('https://id.gs1.org/01/04006381333931/21/A%2FB%25');
  });

  it('gives the EPC URN spellings the same canonical form', () => {
    const item = validateIdentity('urn:epc:id:sgtin:9520123.045678.12345', 'item');
    expect(item).toMatchObject({ scheme: 'epc-urn', gtin: '09520123456788', serial: '12345' });
    expect(item.digital_link).toBe(validateIdentity('https://id.gs1.org/01/09520123456788/21/12345').digital_link);
    expect(validateIdentity('urn:epc:class:lgtin:9520123.045678.ABC1')).toMatchObject({ granularity: 'batch', lot: 'ABC1' });
    expect(validateIdentity('urn:epc:idpat:sgtin:9520123.045678.*')).toMatchObject({ granularity: 'model', gtin: '09520123456788' });
  });

  it.each([
    ['not a uri', 'NOT_A_URI'],
    ['http://id.gs1.org/01/09520123456788', 'UNSUPPORTED_SCHEME'],
    ['https://id.gs1.org/01/09520123456788?17=251231', 'QUERY_OR_FRAGMENT'],
    ['https://id.gs1.org/01/09520123456788#x', 'QUERY_OR_FRAGMENT'],
    ['https://id.gs1.org/gtin/09520123456788', 'MISSING_GTIN'],
    ['https://id.gs1.org/01/95201234567', 'BAD_GTIN_LENGTH'],
    ['https://id.gs1.org/01/09520123456787', 'BAD_GTIN_CHECK_DIGIT'],
    ['https://id.gs1.org/01/09520123456788/21/1/10/A', 'BAD_KEY_QUALIFIER'],
    ['https://id.gs1.org/01/09520123456788/17/251231', 'BAD_KEY_QUALIFIER'],
    [`https://id.gs1.org/01/09520123456788/21/${'x'.repeat(21)}`, 'BAD_AI_VALUE'],
    ['https://id.gs1.org/01/09520123456788/21/%C3%A9', 'BAD_AI_VALUE'],
    ['urn:epc:id:sgtin:952012.045678.1', 'BAD_EPC_URN'],
    ['urn:epc:idpat:sgtin:9520123.045678.5', 'BAD_EPC_URN'],
    ['urn:isbn:9780000000002', 'BAD_EPC_URN'],
  ])('refuses %s (%s)', (uri, reason) => {
    expect(failure(uri)).toMatchObject({ code: 'INVALID_IDENTITY', details: { reason, identity: uri } });
  });

  it('refuses a declared granularity the identifier contradicts', () => {
    expect(failure('https://id.gs1.org/01/09520123456788/10/ABC1', 'item')).toMatchObject({ details: { reason: 'GRANULARITY_MISMATCH' } });
  });
});
