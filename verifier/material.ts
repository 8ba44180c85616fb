/**
 * One entry for every kind of material the verifier checks wherever it runs, as data: what the
 * command line reads from its files, what the verification page fetches, what a test hands both.
 * Archive snapshots are the command line's alone (verifySnapshot: their digests need node:crypto).
 */
import { logExportFrom, verifyLogExport, type LogExport } from './log.js';
import { verifyPackByTrustPath, verifyPackText } from './pack.js';
import { noPinnedAnchors, trustGraphFrom, verifyDelegationPath, type PathQuestion } from './path.js';
import type { PinSet } from './pins.js';
import { makeReport, type Report } from './report.js';
import { keyPathGraph, pinnedAnchors } from './trust-material.js';

export type Material =
  /**
   * A pack's text. With `keyPath`, the trust path material of its carrier key (GET
   * /trust/keys/{kid}/path), the key is judged by the trust graph from the pinned anchors, as the
   * page judges it; without, it must be pinned.
   */
  | { readonly kind: 'pack'; readonly text: string; readonly keyPath?: unknown }
  /** A log as exported: GraphQL `passport(id) { id events logHead }` or REST (logExportFrom), or read already (a snapshot's lines). */
  | { readonly kind: 'log'; readonly log: unknown }
  /** A delegation path question in an export of GET /trust/graph, or in the signed trust path material of a key. */
  | { readonly kind: 'path'; readonly graph: unknown; readonly question: PathQuestion };

/** The report on the material, against the pins; `now` dates the age of fetched trust material. InputError when the material cannot be read. */
export async function verifyMaterial(material: Material, pins: PinSet, now: Date = new Date()): Promise<Report> {
  switch (material.kind) {
    case 'pack':
      if (material.keyPath === undefined) return verifyPackText(material.text, pins).report;
      return verifyPackByTrustPath(material.text, pinnedAnchors(pins, now), material.keyPath, now).report;
    case 'log':
      return verifyLogExport(isLogExport(material.log) ? material.log : logExportFrom(material.log), pins);
    case 'path': {
      const { graph, question } = material;
      if ((graph as { type?: unknown } | null)?.type !== 'key-path') return verifyDelegationPath(trustGraphFrom(graph), question, pins);
      // Trust path material is the service's signed word on its nodes' keys and revocations: its signature first.
      const anchors = pinnedAnchors(pins, now);
      if (!anchors) return makeReport('path', question.to, [noPinnedAnchors('path.anchors')]);
      const read = keyPathGraph(graph, anchors, now);
      if (!read.graph) return makeReport('path', question.to, read.findings);
      const report = verifyDelegationPath(read.graph, question, pins);
      return makeReport('path', question.to, [...read.findings, ...report.findings]);
    }
  }
}

function isLogExport(value: unknown): value is LogExport {
  const log = value as Partial<LogExport> | null;
  return typeof log?.passportId === 'string' && Array.isArray(log.events);
}
