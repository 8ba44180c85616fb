/** The part of @digitalbazaar/bitstring (untyped JavaScript) the status list tests use. */
declare module '@digitalbazaar/bitstring' {
  export class Bitstring {
    constructor(options: { buffer?: Uint8Array; length?: number; leftToRightIndexing?: boolean });
    readonly length: number;
    get(position: number): boolean;
    static decodeBits(options: { encoded: string }): Promise<Uint8Array>;
  }
}
