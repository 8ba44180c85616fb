/**
 * The page every problem `type` links to: docs/GRAPHQL-ERRORS.md as HTML, each code's table row
 * given the id its type names (`/docs/problems#invalid-query`), so a client that follows a problem's
 * type lands on what the code means. Made once, from the file shipped with the platform.
 */
import { readFileSync } from 'node:fs';
import MarkdownIt from 'markdown-it';

const SOURCE = new URL('../docs/GRAPHQL-ERRORS.md', import.meta.url);

/** The anchor of a code, as lib/problem.ts problemType writes it. */
const anchorOf = (code: string) => code.toLowerCase().replaceAll('_', '-');

export function problemPage(): string {
  const markdown = new MarkdownIt({ html: false });
  const anchored = new Set<string>();
  // A code listed in two tables is linked to its first row.
  const body = markdown.render(readFileSync(SOURCE, 'utf8')).replace(/<tr>\n<td><code>([A-Z][A-Z0-9_]+)<\/code>/g, (row, code: string) => {
    if (anchored.has(code)) return row;
    anchored.add(code);
    return row.replace('<tr>', `<tr id="${anchorOf(code)}">`);
  });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Problem types of the passport services</title></head>
<body>
${body}</body>
</html>
`;
}
