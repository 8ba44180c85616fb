/**
 * Dependency rules, checked by `npm run depcheck` (part of `npm test`). Layers from the bottom:
 * lib/ (crypto, formats, plumbing) ← subgraphs/<service>/, gateway/, rest-facade/ side by side (the
 * gateway and the facade reach a service through the graph, and share its words through lib/formats)
 * ← bin/;
 * verifier/ stands beside the services on lib/ alone, and its page (verifier/page/) on the verifier
 * library alone. test/ ← bench/ ← soak/ sit on top (each
 * may use the support of the ones before it) and nothing below them reaches up.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'verifier-not-on-services',
      comment: 'The offline verifier checks what the services publish through lib/formats only, never their code.',
      severity: 'error',
      from: { path: '^verifier/' },
      to: { path: '^(subgraphs|gateway|rest-facade|bin|prisma)/' },
    },
    {
      name: 'page-on-the-library',
      comment:
        "The verification page's script reaches every rule through the verifier library's portable entry, bundled apart as /verify/verifier.js: the page runs the command line's library, not a copy, and nothing of lib/ twice.",
      severity: 'error',
      from: { path: '^verifier/page/' },
      to: { pathNot: '^verifier/(page/|portable\\.ts$)' },
    },
    {
      name: 'subgraph-not-on-another',
      comment: 'A subgraph reaches another service only through the graph (the gateway), never its code.',
      severity: 'error',
      from: { path: '^subgraphs/([^/]+)/' },
      to: { path: '^subgraphs/', pathNot: '^subgraphs/$1/' },
    },
    {
      name: 'servers-through-the-graph',
      comment:
        "The gateway and the REST facade reach a service through the graph only; the wire words they share with it (statuses, kinds, checks) come from lib/formats, not from a copy or the service's code.",
      severity: 'error',
      from: { path: '^(gateway|rest-facade)/' },
      to: { path: '^subgraphs/' },
    },
    {
      name: 'lib-stays-below',
      comment: 'Shared plumbing and formats know nothing of the services, the verifier or the tools above them.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^(subgraphs|gateway|rest-facade|verifier|bin|bench|soak|test)/' },
    },
    {
      name: 'no-upward-references-to-tools',
      comment: 'Product code never imports benchmarks, soak runs or tests.',
      severity: 'error',
      from: { path: '^(lib|subgraphs|gateway|rest-facade|verifier|bin|prisma)/' },
      to: { path: '^(bench|soak|test)/' },
    },
    {
      name: 'tests-stand-alone',
      comment: 'Tests import product code and their own support only; benchmarks and the soak run build on tests, not the reverse.',
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^(bench|soak)/' },
    },
    {
      name: 'bench-not-on-soak',
      comment: "The soak run builds on the benchmarks' support (platform process, stack), not the reverse.",
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^soak/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|generated)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'] },
  },
};
