/** How the operator routes' requests become GraphQL variables, and their data REST answers. */
import { RequestProblem } from '../../../lib/http/request-problem.js';
import { problem } from '../../../lib/problem.js';
import type { RouteContext, RouteRequest } from '../../route-table.js';
import { object } from '../issuer/mappers.js';

export function operatorNotFound(): RequestProblem {
  return new RequestProblem(problem(404, 'NOT_FOUND', 'The platform has no operator with this id.'));
}

export const operatorUrl = (context: RouteContext, id: string) => `${context.baseUrl}/operators/${encodeURIComponent(id)}`;

/** POST /operators: the operator to create. */
export function creationVariables({ body }: RouteRequest) {
  const input = object(body);
  return { input: { id: input.id, name: input.name } };
}

/** A creation: 201 with Location for a new operator, 200 for one that existed (its creation completed or restated). */
export function creationAnswer(creation: { created: boolean; operator: { id: string } }, context: RouteContext) {
  return creation.created ? { status: 201, headers: { location: operatorUrl(context, creation.operator.id) }, body: creation.operator } : { status: 200, body: creation.operator };
}
