/**
 * `npm run documents`: writes the platform's trusted documents (lib/graphql/platform-documents.json,
 * lib/graphql/trusted-documents.ts) from every GraphQL document the platform sends the gateway: the
 * REST facade's (each route's operation and every operation of rest-facade/routes/<group>/operations.ts,
 * the refusal reports), the verification page's queries, the subgraphs' questions to the graph, and
 * `npm run keys -- rotate`'s mutations.
 * test/gateway/trusted-documents.test.ts checks that the committed file is what this writes.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Kind, parse } from 'graphql';
import { SERVICES } from '../lib/config/services.js';
import { PLACE_PLATFORM_KEYS } from '../lib/graphql/subgraph.js';
import { documentHash, PLATFORM_DOCUMENTS_FILE } from '../lib/graphql/trusted-documents.js';
import { rotateKeyOperation } from '../lib/keys/purposes.js';
import { refusalReportOperation } from '../rest-facade/access.js';
import * as archiveOperations from '../rest-facade/routes/archive/operations.js';
import * as commonOperations from '../rest-facade/routes/common/operations.js';
import * as credentialOperations from '../rest-facade/routes/credentials/operations.js';
import * as digitalLinkOperations from '../rest-facade/routes/digital-link/operations.js';
import { ROUTE_TABLES } from '../rest-facade/routes/index.js';
import * as issuerOperations from '../rest-facade/routes/issuer/operations.js';
import * as registryOperations from '../rest-facade/routes/registry/operations.js';
import * as trustOperations from '../rest-facade/routes/trust/operations.js';
import { VERIFY_PAGE_QUERIES } from '../rest-facade/verify-page.js';
import { GATHER_QUERY } from '../subgraphs/archive/service/gather.js';
import { MODEL_QUERY } from '../subgraphs/issuer/service/registry-client.js';
import { KEY_STANDINGS_QUERY } from '../subgraphs/issuer/service/trust-client.js';
import { KEYRINGS } from '../subgraphs/trust/service/platform-keys.js';

/** Whether a string is a GraphQL document with an operation (the operations modules also export field lists). */
function isOperation(text: string): boolean {
  try {
    return parse(text).definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  } catch {
    return false;
  }
}

/** The manifest: each document the platform sends, by its SHA-256, in the order of the ids. */
export function platformDocuments(): Record<string, string> {
  const operationsModules = [archiveOperations, commonOperations, credentialOperations, digitalLinkOperations, issuerOperations, registryOperations, trustOperations];
  const documents = new Set<string>([
    ...Object.values(ROUTE_TABLES).flatMap((table) => table.routes.map((route) => route.operation)),
    ...operationsModules.flatMap((module) => Object.values(module).filter((value): value is string => typeof value === 'string' && isOperation(value))),
    ...SERVICES.map(refusalReportOperation),
    ...VERIFY_PAGE_QUERIES,
    GATHER_QUERY,
    MODEL_QUERY,
    KEY_STANDINGS_QUERY,
    KEYRINGS,
    PLACE_PLATFORM_KEYS,
    ...SERVICES.map(rotateKeyOperation),
  ]);
  return Object.fromEntries([...documents].map((document) => [documentHash(document), document]).sort(([a], [b]) => a!.localeCompare(b!)));
}

/** The manifest file's text. */
export const platformDocumentsText = () => `${JSON.stringify(platformDocuments(), null, 2)}\n`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(PLATFORM_DOCUMENTS_FILE, platformDocumentsText());
  console.log(`${PLATFORM_DOCUMENTS_FILE}: ${Object.keys(platformDocuments()).length} documents.`);
}
