/**
 * The words of a passport's identity as the issuer writes it in a passport's core
 * (`core.identity`): the two GS1 spellings an identifier may take, and the granularity it names
 * (a serial names an item, a lot a batch, a bare GTIN a model). Parsing is the issuer's
 * (subgraphs/issuer/domain/identity.ts).
 */
export const IDENTITY_SCHEMES = ['gs1-digital-link', 'epc-urn'] as const;
export type IdentityScheme = (typeof IDENTITY_SCHEMES)[number];

export const GRANULARITIES = ['model', 'batch', 'item'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
