/**
 * The cost of an operation, from the `@cost(weight:)` and `@listSize(...)` directives of the IBM
 * GraphQL Cost Directive specification as Apollo Federation 2.9 composes them (the subgraphs import
 * them from the federation spec; the supergraph carries them), so that Apollo Router's and Hive
 * Gateway's demand control read the same weights as the built-in gateway (docs/ONE-GRAPH.md, "What
 * a request may cost").
 *
 * A field costs, as Apollo Router's static estimate counts it: its list size × (its weight, else
 * its type's, else 1 for an object and 0 for a leaf + the cost of its selection) + the weights of the
 * arguments given. A list's size is, in order: what the parent field's slicing argument gives a field
 * it names in `sizedFields`; the largest slicing argument given (or its default); the length of the
 * one list argument of a field that answers one item per element (`passports(ids:)`,
 * `trustKeyStandings(questions:)`, a subgraph's `_entities(representations:)`), at most its
 * `assumedSize`; its `assumedSize`; else DEFAULT_LIST_SIZE. A mutation costs MUTATION_COST more.
 * Weights are set from measured CPU: one unit is about 10 µs (docs/benchmarks/graphql-cost.md).
 *
 * Written here rather than taken from a library: graphql-armor's cost limit knows no directives,
 * graphql-query-complexity's estimators cannot give a parent's slicing argument to its sized
 * fields, and Hive Gateway's demand control is part of its runtime.
 */
import { createRequire } from 'node:module';
import type { ApolloServerPlugin, BaseContext } from '@apollo/server';
import * as esmGraphql from 'graphql';
import {
  GraphQLError,
  Kind,
  type ArgumentNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { Directive } from 'type-graphql';
import { ProblemError } from '../problem.js';

const requireModule = createRequire(import.meta.url);

let commonJsGraphql: typeof esmGraphql | undefined;

/**
 * The graphql build a schema was made with, whose functions must read it: @apollo/subgraph and
 * @apollo/gateway build theirs with the CommonJS one, whose types the ES module's checks refuse.
 */
export function graphqlOf(schema: GraphQLSchema): typeof esmGraphql {
  // Looked up once: require() resolves its path again on every call (~10 µs, twice a request at the gateway and a subgraph).
  return schema instanceof esmGraphql.GraphQLSchema ? esmGraphql : (commonJsGraphql ??= requireModule('graphql') as typeof esmGraphql);
}

/** The size of a list with no `@listSize` (Apollo Router's `list_size` setting plays this part). */
export const DEFAULT_LIST_SIZE = 10;
/** What a mutation costs on top of its fields, as Apollo Router counts it. */
export const MUTATION_COST = 10;

export interface ListSize {
  assumedSize?: number;
  slicingArguments?: string[];
  sizedFields?: string[];
}

/** `@cost(weight:)` on a type-graphql class, field or resolver: what one of it costs, in units of about 10 µs of CPU. */
export const Cost = (weight: number) => Directive(`@cost(weight: ${weight})`);

/** `@listSize(...)` on a type-graphql field or resolver that returns a list (or, with `sizedFields`, a page of one). */
export function ListSize(size: ListSize & { requireOneSlicingArgument?: boolean }) {
  const members = Object.entries(size).map(([name, value]) => `${name}: ${JSON.stringify(value)}`);
  return Directive(`@listSize(${members.join(', ')})`);
}

/** The weights and list sizes of a schema, by coordinate: `Type`, `Type.field`, `Type.field(argument:)`. */
export interface CostAnnotations {
  weights: ReadonlyMap<string, number>;
  listSizes: ReadonlyMap<string, ListSize>;
}

function directiveArguments(directive: DirectiveNode): Record<string, unknown> {
  const value = (node: ArgumentNode['value']): unknown => {
    if (node.kind === Kind.INT) return Number(node.value);
    if (node.kind === Kind.LIST) return node.values.map(value);
    if (node.kind === Kind.STRING || node.kind === Kind.BOOLEAN) return node.value;
    return undefined;
  };
  return Object.fromEntries((directive.arguments ?? []).map((argument) => [argument.name.value, value(argument.value)]));
}

/** The `@cost` and `@listSize` applications of an SDL document (a subgraph's or the supergraph's). */
export function costAnnotations(sdl: DocumentNode): CostAnnotations {
  const weights = new Map<string, number>();
  const listSizes = new Map<string, ListSize>();
  const note = (coordinate: string, directives: readonly DirectiveNode[] | undefined) => {
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name === 'cost' || name === 'federation__cost') weights.set(coordinate, directiveArguments(directive).weight as number);
      if (name === 'listSize' || name === 'federation__listSize') listSizes.set(coordinate, directiveArguments(directive) as ListSize);
    }
  };
  for (const definition of sdl.definitions) {
    if (!('name' in definition) || !definition.name || !('directives' in definition)) continue;
    const type = definition.name.value;
    note(type, definition.directives);
    if (!('fields' in definition)) continue;
    for (const field of definition.fields ?? []) {
      const coordinate = `${type}.${field.name.value}`;
      note(coordinate, field.directives);
      for (const argument of 'arguments' in field ? (field.arguments ?? []) : []) note(`${coordinate}(${argument.name.value}:)`, argument.directives);
    }
  }
  return { weights, listSizes };
}

export interface CostedOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  operation: OperationDefinitionNode;
  /** The request's variables as sent; coerced here as execution would. */
  variables?: Record<string, unknown> | null;
}

/** What the cost knows of a field on a parent type that no request's variables change. */
interface FieldShape {
  /** Its named type, and whether its selection is counted (a composite type with a selection set). */
  named: esmGraphql.GraphQLNamedType;
  composite: boolean;
  isList: boolean;
  /** Its weight, else its type's, else 1 for an object and 0 for a leaf. */
  own: number;
  /** The weighted arguments, by name: each costs its weight when given. */
  argumentWeights: readonly (readonly [string, number])[];
  field: GraphQLField<unknown, unknown>;
  listSize: ListSize | undefined;
  /**
   * The field as costed, when no argument it is given changes its cost (most fields: no weighted
   * argument, no slicing argument, not a list sized by a list argument): the same for every request,
   * whose arguments are then not read.
   */
  unargued?: CostedField;
}

/** A field of the operation as the cost counts it: its shape, and what the request's variables make of its arguments. */
interface CostedField extends FieldShape {
  /** The weights of the arguments given. */
  argumentsCost: number;
  args: Record<string, unknown>;
}

/**
 * What stays true of a document's fields from one request to the next, kept with the parsed
 * document (Apollo Server hands every request of the same text the same DocumentNode): each field's
 * shape on each parent type, and the fields a selection set asks of a type where no @skip/@include
 * makes them depend on the variables. Kept per annotations (a changed supergraph brings new ones,
 * and a new schema new types).
 */
interface DocumentShapes {
  fields: WeakMap<FieldNode, Map<GraphQLCompositeType, FieldShape | null>>;
  selections: WeakMap<SelectionSetNode, Map<GraphQLCompositeType, FieldNode[]>>;
}
const documentShapes = new WeakMap<CostAnnotations['weights'], DocumentShapes>();

function shapesOf(annotations: CostAnnotations): DocumentShapes {
  let shapes = documentShapes.get(annotations.weights);
  if (!shapes) documentShapes.set(annotations.weights, (shapes = { fields: new WeakMap(), selections: new WeakMap() }));
  return shapes;
}

const NO_ARGUMENTS: Record<string, unknown> = Object.freeze({});

/**
 * What the estimate and the actual cost share: the operation's fields on each type as the schema
 * types them (fragments resolved, `@skip`/`@include` applied) and each field's own cost; undefined
 * when the variables do not fit (the operation is refused, BAD_USER_INPUT, before anything runs).
 */
function costWalk({ schema, document, operation, variables }: CostedOperation, annotations: CostAnnotations) {
  const {
    getArgumentValues,
    getDirectiveValues,
    getNamedType,
    getNullableType,
    getVariableValues,
    GraphQLIncludeDirective,
    GraphQLSkipDirective,
    isAbstractType,
    isCompositeType,
    isListType,
    isObjectType,
  } = graphqlOf(schema);
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {});
  if (!coerced.coerced) return undefined;
  const values = coerced.coerced;
  const root = schema.getRootType(operation.operation);
  if (!root) return undefined;
  const shapes = shapesOf(annotations);
  let fragments: Map<string, FragmentDefinitionNode> | undefined;
  const fragmentNamed = (name: string) => {
    if (!fragments) {
      fragments = new Map();
      for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    return fragments.get(name);
  };

  const included = (node: FieldNode | { directives?: FieldNode['directives'] }) =>
    !node.directives?.length || (getDirectiveValues(GraphQLSkipDirective, node, values)?.if !== true && getDirectiveValues(GraphQLIncludeDirective, node, values)?.if !== false);

  /**
   * The fields a selection set asks of an object of type `type` (fragments on other types left out),
   * by response key; `fixed` is false once a directive (which may be @skip or @include) was met.
   */
  const fieldsOn = (type: GraphQLCompositeType, selectionSet: SelectionSetNode, into: FieldNode[], seen: Set<string>, found = { fixed: true }) => {
    for (const selection of selectionSet.selections) {
      if (selection.directives?.length) found.fixed = false;
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) into.push(selection);
      else {
        const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? fragmentNamed(selection.name.value) : selection;
        if (!fragment || (selection.kind === Kind.FRAGMENT_SPREAD && seen.has(selection.name.value))) continue;
        if (selection.kind === Kind.FRAGMENT_SPREAD) seen.add(selection.name.value);
        const condition = fragment.typeCondition && schema.getType(fragment.typeCondition.name.value);
        if (condition && condition !== type && !(isAbstractType(condition) && isObjectType(type) && schema.isSubType(condition, type))) continue;
        fieldsOn(type, fragment.selectionSet, into, seen, found);
      }
    }
    return found;
  };

  /** A field's arguments; none when they do not fit (the field then fails), so its lists count at their assumed size. */
  const argumentsOf = (field: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> => {
    try {
      return getArgumentValues(field, node, values);
    } catch {
      return {};
    }
  };

  /** A field of `parent` as the cost counts it, whatever the variables; null for introspection and fields the type does not have. */
  const shapeOf = (parent: GraphQLCompositeType, node: FieldNode): FieldShape | null => {
    const name = node.name.value;
    if (name.startsWith('__')) return null;
    const field = 'getFields' in parent ? (parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined) : undefined;
    if (!field) return null;
    const coordinate = `${parent.name}.${name}`;
    const named = getNamedType(field.type);
    const shape: FieldShape = {
      named,
      composite: Boolean(node.selectionSet) && isCompositeType(named),
      isList: isListType(getNullableType(field.type)),
      own: annotations.weights.get(coordinate) ?? annotations.weights.get(named.name) ?? (isCompositeType(named) ? 1 : 0),
      argumentWeights: field.args.flatMap((argument) => {
        const weight = annotations.weights.get(`${coordinate}(${argument.name}:)`);
        return weight === undefined ? [] : [[argument.name, weight] as const];
      }),
      field,
      listSize: annotations.listSizes.get(coordinate),
    };
    const sizedByArguments = Boolean(shape.listSize?.slicingArguments?.length) || (shape.isList && field.args.filter((argument) => isListType(getNullableType(argument.type))).length === 1);
    if (!shape.argumentWeights.length && !sizedByArguments) shape.unargued = { ...shape, args: NO_ARGUMENTS, argumentsCost: 0 };
    return shape;
  };

  /** The object types a selection on `type` may meet: itself, or an interface's or union's members. */
  const membersOf = (type: GraphQLCompositeType): readonly GraphQLCompositeType[] => (isAbstractType(type) ? schema.getPossibleTypes(type) : [type]);

  // Each asked once per operation: a list of 500 items, and the estimate and the actual cost of one request, ask the same questions.
  const fields = new Map<SelectionSetNode, Map<GraphQLCompositeType, FieldNode[]>>();
  const costedFields = new Map<FieldShape, CostedField>();
  return {
    root,
    fieldsOn: (type: GraphQLCompositeType, selectionSet: SelectionSetNode): FieldNode[] => {
      let byType = shapes.selections.get(selectionSet);
      let known = byType?.get(type);
      if (known) return known;
      byType = fields.get(selectionSet);
      known = byType?.get(type);
      if (known) return known;
      const into: FieldNode[] = [];
      const { fixed } = fieldsOn(type, selectionSet, into, new Set());
      const kept = fixed ? shapes.selections : fields;
      byType = kept.get(selectionSet);
      if (!byType) kept.set(selectionSet, (byType = new Map()));
      byType.set(type, into);
      return into;
    },
    costedField: (parent: GraphQLCompositeType, node: FieldNode): CostedField | undefined => {
      let byParent = shapes.fields.get(node);
      if (!byParent) shapes.fields.set(node, (byParent = new Map()));
      let shape = byParent.get(parent);
      if (shape === undefined) byParent.set(parent, (shape = shapeOf(parent, node)));
      if (!shape) return undefined;
      if (shape.unargued) return shape.unargued;
      let costed = costedFields.get(shape);
      if (!costed) {
        const args = argumentsOf(shape.field, node);
        let argumentsCost = 0;
        for (const [name, weight] of shape.argumentWeights) if (args[name] !== undefined) argumentsCost += weight;
        costedFields.set(shape, (costed = { ...shape, args, argumentsCost }));
      }
      return costed;
    },
    membersOf,
    isListInput: (type: esmGraphql.GraphQLInputType) => isListType(getNullableType(type)),
  };
}

type CostWalk = NonNullable<ReturnType<typeof costWalk>>;

/**
 * The estimate of an operation and, once it has run, its actual cost, over one walk of it: the
 * variables coerced once, each selection's fields and each field's cost found once for both.
 */
export function operationCosts(costed: CostedOperation, annotations: CostAnnotations): { estimated: number; actual(data: Record<string, unknown> | null | undefined): number } {
  const walk = costWalk(costed, annotations);
  // Variables that do not fit their types: the operation is refused (BAD_USER_INPUT) before anything runs.
  if (!walk) return { estimated: 0, actual: () => 0 };
  return { estimated: estimatedCost(walk, costed.operation), actual: (data) => (data ? answeredCost(walk, costed.operation, data) : 0) };
}

/** The cost of one operation of a document against a schema annotated with `annotations`, before it runs: the estimate. */
export function operationCost(costed: CostedOperation, annotations: CostAnnotations): number {
  return operationCosts(costed, annotations).estimated;
}

function estimatedCost(walk: CostWalk, operation: OperationDefinitionNode): number {
  /** The cost of a selection set on `type`: for an interface or union, that of its costliest member. */
  const selectionCost = (type: GraphQLCompositeType, selectionSet: SelectionSetNode, sized: ReadonlyMap<string, number>): number => {
    let most = 0;
    for (const member of walk.membersOf(type)) {
      let sum = 0;
      for (const field of walk.fieldsOn(member, selectionSet)) sum += fieldCost(member, field, sized);
      most = Math.max(most, sum);
    }
    return most;
  };

  const fieldCost = (parent: GraphQLCompositeType, node: FieldNode, sized: ReadonlyMap<string, number>): number => {
    const costed = walk.costedField(parent, node);
    if (!costed) return 0;
    const { listSize, args } = costed;
    const slice = slicedSize(listSize, args);
    // A connection's page size goes to its list fields; without the slicing argument, the assumed size.
    const pageSize = slice ?? listSize?.assumedSize ?? DEFAULT_LIST_SIZE;
    const childSized = listSize?.sizedFields ? new Map(listSize.sizedFields.map((sizedField) => [sizedField, pageSize])) : NONE_SIZED;
    const children = costed.composite ? selectionCost(costed.named as GraphQLCompositeType, node.selectionSet!, childSized) : 0;
    const size = costed.isList
      ? (sized.get(node.name.value) ?? (listSize?.sizedFields ? undefined : slice) ?? listArgumentSize(costed.field, args, listSize, walk.isListInput) ?? listSize?.assumedSize ?? DEFAULT_LIST_SIZE)
      : 1;
    return size * (costed.own + children) + costed.argumentsCost;
  };

  return (operation.operation === 'mutation' ? MUTATION_COST : 0) + selectionCost(walk.root, operation.selectionSet, NONE_SIZED);
}

/** No field sized by its parent's slicing argument (most fields: made once rather than per field). */
const NONE_SIZED: ReadonlyMap<string, number> = new Map();

/**
 * The cost of an operation as it ran: the same weights, with every list at the size it was answered
 * (Apollo Router's "actual" cost). A field absent from the answer (its parent null, an error) costs
 * nothing, an object answered null its own weight (its resolver ran), a list its items.
 */
export function actualCost(costed: CostedOperation, annotations: CostAnnotations, data: Record<string, unknown> | null | undefined): number {
  return operationCosts(costed, annotations).actual(data);
}

function answeredCost(walk: CostWalk, operation: OperationDefinitionNode, data: Record<string, unknown>): number {
  const selectionCost = (type: GraphQLCompositeType, selectionSet: SelectionSetNode, value: Record<string, unknown>): number => {
    const typename = value.__typename;
    let most = 0;
    for (const member of walk.membersOf(type)) {
      if (typeof typename === 'string' && member.name !== typename) continue;
      let sum = 0;
      for (const node of walk.fieldsOn(member, selectionSet)) sum += fieldCost(member, node, value);
      most = Math.max(most, sum);
    }
    return most;
  };

  const valueCost = (costed: CostedField, node: FieldNode, value: unknown): number => {
    if (value === null || value === undefined) return 0;
    if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + valueCost(costed, node, item), 0);
    return costed.own + (costed.composite && typeof value === 'object' ? selectionCost(costed.named as GraphQLCompositeType, node.selectionSet!, value as Record<string, unknown>) : 0);
  };

  const fieldCost = (parent: GraphQLCompositeType, node: FieldNode, parentValue: Record<string, unknown>): number => {
    const key = node.alias?.value ?? node.name.value;
    if (!(key in parentValue)) return 0;
    const costed = walk.costedField(parent, node);
    if (!costed) return 0;
    const value = parentValue[key];
    return (value === null && !costed.isList ? costed.own : valueCost(costed, node, value)) + costed.argumentsCost;
  };

  return (operation.operation === 'mutation' ? MUTATION_COST : 0) + selectionCost(walk.root, operation.selectionSet, data);
}

/** The largest slicing argument given (or defaulted), when the field has any. */
function slicedSize(listSize: ListSize | undefined, args: Record<string, unknown>): number | undefined {
  const given = (listSize?.slicingArguments ?? []).map((name) => args[name]).filter((value): value is number => typeof value === 'number');
  return given.length ? Math.max(...given) : undefined;
}

/** A list field answering one item per element of its one list argument: that list's length, at most its assumed size. */
function listArgumentSize(
  field: GraphQLField<unknown, unknown>,
  args: Record<string, unknown>,
  listSize: ListSize | undefined,
  isList: (type: esmGraphql.GraphQLInputType) => boolean,
): number | undefined {
  const lists = field.args.filter((argument) => isList(argument.type));
  if (lists.length !== 1) return undefined;
  const given = args[lists[0]!.name];
  if (!Array.isArray(given)) return undefined;
  return listSize?.assumedSize === undefined ? given.length : Math.min(given.length, listSize.assumedSize);
}

/** The refusal of an operation over the limit, worded as the other limits are (gateway/refusals.ts). */
export function costRefusal(found: number, max: number): GraphQLError {
  return new GraphQLError(
    `The operation costs ${found} (the weight of each field it asks, times the size of the lists it asks for, docs/ONE-GRAPH.md); the limit is ${max} (setting GRAPHQL_MAX_COST).`,
    { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_COST', value: max, found } } },
  );
}

/** Where the gateway reports each operation's estimated and actual cost (its metrics), beside the answer's `extensions.cost`. */
export type CostReport = (operationType: string, estimated: number, actual: number) => void;

/**
 * Holds every operation to `maxCost` once it is parsed, validated and chosen, before anything runs
 * (variables are needed for the sizes, so this is not a validation rule). Refused: GRAPHQL_VALIDATION_FAILED,
 * with `extensions.limit`, as the other limits are. With `report` (the gateway's), an operation that
 * ran is answered with `extensions.cost` {estimated, actual, max} (Hive Gateway's demand control names
 * the first and last so) and both costs are reported.
 */
export function costLimitPlugin<Context extends BaseContext>(annotations: CostAnnotations, maxCost: number, report?: CostReport): ApolloServerPlugin<Context> {
  return {
    async requestDidStart() {
      let costs: ReturnType<typeof operationCosts> | undefined;
      let ran = false;
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          if (!operation) return;
          const found = operationCosts({ schema, document, operation, variables: request.variables }, annotations);
          if (found.estimated > maxCost) {
            const refusal = costRefusal(found.estimated, maxCost);
            // Thrown here, an error without a status would be answered 500.
            throw new GraphQLError(refusal.message, { extensions: { ...refusal.extensions, http: { status: 400 } } });
          }
          costs = found;
        },
        ...(report && {
          async executionDidStart() {
            ran = true;
          },
          async willSendResponse({ operation, response }) {
            if (!ran || costs === undefined || !operation || response.body.kind !== 'single') return;
            const result = response.body.singleResult;
            const { estimated } = costs;
            const actual = costs.actual(result.data);
            result.extensions = { ...result.extensions, cost: { estimated, actual, max: maxCost } };
            report(operation.operation, estimated, actual);
          },
        }),
      };
    },
  };
}

/**
 * What an operation has spent of the work whose size shows only as it runs: a passport's log is as
 * long as it is, and its weights assume one of a few hundred events. Each such field charges its
 * actual cost, in the same units, for its subject (a passport) before it runs; once the operation
 * would pass `budget`, the next is refused (400 COST_ACTUAL_TOO_EXPENSIVE, a field error) — unless it
 * is the first of its kind (`verdict`, `events`, …) for the only subject the operation has read, so
 * that any one passport can be read and verified whole, however long its log. Kept per operation
 * (its context object: Apollo Server gives each operation of a batch its own copy), since one batch
 * may carry several clients' operations.
 */
export function actualCostMeter(budget: number) {
  const accounts = new WeakMap<object, { spent: number; subjects: Set<string>; charged: Set<string> }>();
  return (context: object, cost: number, subject: string, kind: string): void => {
    const account = accounts.get(context) ?? { spent: 0, subjects: new Set<string>(), charged: new Set<string>() };
    const charge = `${kind} of passport ${subject}`;
    const firstOfItsKind = !account.charged.has(charge) && [...account.subjects].every((seen) => seen === subject);
    if (!firstOfItsKind && account.spent + cost > budget) {
      throw new ProblemError(
        400,
        'COST_ACTUAL_TOO_EXPENSIVE',
        `The operation has spent ${account.spent} of its ${budget} (GRAPHQL_MAX_COST) on passports' logs, and the ${charge} would take ${cost} more: the logs are longer than its estimate assumed. Ask for fewer passports in one request.`,
        { budget, spent: account.spent, needed: cost },
      );
    }
    account.spent += cost;
    account.subjects.add(subject);
    account.charged.add(charge);
    accounts.set(context, account);
  };
}
