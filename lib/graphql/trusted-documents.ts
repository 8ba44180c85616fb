/**
 * Trusted documents (persisted operations, in the manner of Hive's and Cosmo's): the GraphQL
 * documents the platform's own callers send (the REST facade's routes, the verification page's
 * queries, the subgraphs' questions to the graph) are kept in a manifest, SHA-256 of each document
 * (hex) → the document, made by `npm run documents` (bin/platform-documents.ts). The callers send
 * each as `{"documentId": "sha256:…"}`; the gateway runs it from its manifest, and with
 * TRUSTED_DOCUMENTS on runs nothing else (gateway/trusted-documents.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The platform's own documents, committed beside this module. */
export const PLATFORM_DOCUMENTS_FILE = fileURLToPath(new URL('./platform-documents.json', import.meta.url));

/** A document's id: the SHA-256 of its text, hex, as Apollo's persisted queries and Cosmo name it. */
export const documentHash = (document: string) => createHash('sha256').update(document).digest('hex');

/** A manifest's documents by id; one whose id is not its text's SHA-256 is refused, naming the file. */
export function readManifest(file: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw new Error(`${file} is not a manifest: a JSON object of SHA-256 (hex) → document.`);
  const documents = new Map<string, string>();
  for (const [id, document] of Object.entries(manifest)) {
    if (typeof document !== 'string' || documentHash(document) !== id.toLowerCase()) throw new Error(`${file}: ${id} is not the SHA-256 (hex) of the document it names.`);
    documents.set(id.toLowerCase(), document);
  }
  return documents;
}

let platformIds: Map<string, string> | undefined;

/**
 * The body of a request of `document` to the gateway as the platform's callers send it: by its id
 * when it is one of the platform's documents, else as text (a test's or an operator's own query),
 * which a gateway in trusted-documents mode refuses.
 */
export function gatewayRequestBody(document: string, variables?: Record<string, unknown>): string {
  platformIds ??= new Map([...readManifest(PLATFORM_DOCUMENTS_FILE)].map(([id, text]) => [text, id]));
  const id = platformIds.get(document);
  return JSON.stringify({ ...(id ? { documentId: `sha256:${id}` } : { query: document }), ...(variables && { variables }) });
}
