/** The cache hint a subgraph's Cache-Control header gives, as RemoteGraphQLDataSource makes it: uncacheable unless it says max-age. */
export function cacheHint(header: string | undefined): { maxAge: number; scope?: 'PUBLIC' | 'PRIVATE' } {
  // Its directives, as RemoteGraphQLDataSource reads them: name=value (quotes dropped) or a bare name.
  const directives: Record<string, string | true> = {};
  for (const part of header?.trim().split(/\s*,\s*/) ?? []) {
    const [name, value] = part.split(/\s*=\s*/, 2) as [string, string | undefined];
    directives[name] = value === undefined ? true : value.replace(/^"|"$/g, '');
  }
  const maxAge = directives['max-age'];
  return {
    maxAge: typeof maxAge === 'string' && /^[0-9]+$/.test(maxAge) ? Number(maxAge) : 0,
    ...(directives.private === true ? { scope: 'PRIVATE' as const } : {}),
    ...(directives.public === true ? { scope: 'PUBLIC' as const } : {}),
  };
}
