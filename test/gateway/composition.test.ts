/**
 * A process composes the same subgraphs once (gateway/composition.ts): what it serves from that
 * composition for new URLs is exactly what composing afresh with those URLs gives.
 */
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../gateway/composition.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable"])';
const SUBGRAPHS = [
  { name: 'trust', sdl: `${LINK}\ntype Node @key(fields: "id") { id: ID! kind: String }\ntype Query { node(id: ID!): Node }` },
  { name: 'issuer', sdl: `${LINK}\ntype Node @key(fields: "id") { id: ID! passports: [String!]! }\ntype Query { passports: [String!]! }` },
];
const at = (ports: [number, number]) => SUBGRAPHS.map((subgraph, index) => ({ ...subgraph, url: `http://127.0.0.1:${ports[index]}/graphql?q="x"` }));
const afresh = (subgraphs: ReturnType<typeof at>) => composeServices(subgraphs.map(({ name, url, sdl }) => ({ name, url, typeDefs: parse(sdl) }))).supergraphSdl;

describe('composing the supergraph', () => {
  it('gives for every set of URLs what a fresh composition gives, also when served from an earlier one', () => {
    for (const ports of [
      [40001, 40002],
      [41234, 40002],
      [40001, 40002],
    ] as [number, number][]) {
      const subgraphs = at(ports);
      expect(composeSubgraphs(subgraphs)).toBe(afresh(subgraphs));
    }
  });

  it('composes other schemas anew, and names what fails', () => {
    const changed = at([40001, 40002]).map((subgraph) => (subgraph.name === 'issuer' ? { ...subgraph, sdl: subgraph.sdl.replace('passports: [String!]!', 'passports: [ID!]!') } : subgraph));
    expect(composeSubgraphs(changed)).toBe(afresh(changed));
    const clashing = changed.map((subgraph) => (subgraph.name === 'issuer' ? { ...subgraph, sdl: subgraph.sdl.replace('kind', 'x').replace('passports: [ID!]!', 'kind: Int') } : subgraph));
    expect(() => composeSubgraphs(clashing)).toThrow(/supergraph composition failed/);
  });
});
