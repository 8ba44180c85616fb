/**
 * A JSON document of arrays ({"nodes":[…],"edges":[…],…}) written page by page as its pages come
 * from the graph, so that the facade holds one or two pages however long the document is (GET
 * /trust/graph, GET /trust/revocations).
 */
type Json = Record<string, any>;

/** A document's arrays, in the order its pages go through them: the member's name and how a record is written. */
export type Sections = readonly (readonly [name: string, out: (record: Json) => Json])[];

/** A page of the graph: records by section name, and the cursor of the next page. */
export type Page = { pageInfo: { endCursor: string | null } };

/**
 * The document from its first page on: each page's records as JSON, the next page fetched
 * (`nextPage`) while this one is written, so the writer holds two pages at most. The pages come in
 * section order, so a section's array is closed when the next one's records begin.
 */
export async function* pagedDocument(sections: Sections, first: Page, nextPage: (after: string) => Promise<Page>): AsyncGenerator<Uint8Array> {
  let section = 0;
  let written = 0;
  const text: string[] = [`{"${sections[0]![0]}":[`];
  const advanceTo = (target: number) => {
    for (; section < target; section += 1, written = 0) text.push(`],"${sections[section + 1]![0]}":[`);
  };
  const page = (after: string) => {
    const request = nextPage(after);
    // Awaited below unless the client goes away first; then its failure must not go unhandled.
    request.catch(() => undefined);
    return request;
  };
  let current: Page | undefined = first;
  while (current) {
    const next: Promise<Page> | undefined = current.pageInfo.endCursor === null ? undefined : page(current.pageInfo.endCursor);
    sections.forEach(([name, out], index) => {
      const records = (current as Json)[name] as Json[];
      if (records.length === 0) return;
      advanceTo(index);
      for (const record of records) text.push(`${written++ > 0 ? ',' : ''}${JSON.stringify(out(record))}`);
    });
    yield Buffer.from(text.join(''));
    text.length = 0;
    current = next && (await next);
  }
  advanceTo(sections.length - 1);
  text.push(']}');
  yield Buffer.from(text.join(''));
}
