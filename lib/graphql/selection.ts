/** What a request asks of the value a resolver returns, for reading no more than that. */
import { Kind, type DirectiveNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether every field the request selects on the object (or list of objects) this resolver returns
 * is one of `fields`, by field name (aliases looked through), in fragments and inline fragments too;
 * a field left out by @skip or @include does not count. Reads the query's syntax tree only: the
 * schema's objects come from another copy of graphql (CommonJS, through @apollo/subgraph) than this
 * module's, so graphql's type functions must not be given them.
 */
export function asksOnly(info: GraphQLResolveInfo, fields: ReadonlySet<string>): boolean {
  const visited = new Set<string>();
  const only = (selectionSet: SelectionSetNode): boolean =>
    selectionSet.selections.every((selection) => {
      if (!included(selection.directives, info.variableValues)) return true;
      switch (selection.kind) {
        case Kind.FIELD:
          return fields.has(selection.name.value);
        case Kind.INLINE_FRAGMENT:
          return only(selection.selectionSet);
        case Kind.FRAGMENT_SPREAD: {
          const name = selection.name.value;
          const fragment = info.fragments[name];
          if (visited.has(name)) return true;
          visited.add(name);
          return fragment !== undefined && only(fragment.selectionSet);
        }
      }
      return false;
    });
  return info.fieldNodes.every((node) => node.selectionSet === undefined || only(node.selectionSet));
}

/** False when @skip(if: true) or @include(if: false) leaves the selection out. */
function included(directives: readonly DirectiveNode[] | undefined, variables: Record<string, unknown>): boolean {
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    if (name !== 'skip' && name !== 'include') continue;
    const argument = directive.arguments?.find((arg) => arg.name.value === 'if')?.value;
    const condition = argument?.kind === Kind.BOOLEAN ? argument.value : argument?.kind === Kind.VARIABLE ? variables[argument.name.value] === true : undefined;
    if (condition === undefined) continue;
    if (name === 'skip' ? condition : !condition) return false;
  }
  return true;
}
