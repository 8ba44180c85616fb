/** The part of jsonld (jsonld.js, untyped JavaScript; JSON-LD 1.1 processing) the credential tests use. */
declare module 'jsonld' {
  export interface RemoteDocument {
    contextUrl: string | null;
    documentUrl: string;
    document: unknown;
  }
  export interface Options {
    /** Fail on anything that would be dropped or changed silently (an undefined term, a relative IRI). */
    safe?: boolean;
    documentLoader?: (url: string) => Promise<RemoteDocument>;
  }
  export interface Term {
    termType: string;
    value: string;
  }
  export interface Quad {
    subject: Term;
    predicate: Term;
    object: Term & { datatype?: Term };
    graph: Term;
  }
  export function expand(document: unknown, options?: Options): Promise<unknown[]>;
  export function toRDF(document: unknown, options?: Options): Promise<Quad[]>;
  const jsonld: { expand: typeof expand; toRDF: typeof toRDF };
  export default jsonld;
}
