/** Operators, managed by the platform admin (POST /operators, GET /operators, GET /operators/{id}, POST /operators/{id}/suspension). */
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { refusalsLogged, type RequestContext } from '../../../lib/graphql/context.js';
import { ProblemError } from '../../../lib/problem.js';
import type { CredentialService } from '../service/credential-service.js';
import type { OperatorService, OperatorView } from '../service/operator-service.js';
import { OperatorCreationType, OperatorInput, OperatorType } from '../schema/operators.js';

/** Only the platform's own admin (operator null) manages operators (`@Authorized(PLATFORM_ADMIN)`); an operator's admin reads its own. */
function refuseUnlessPlatformOrOwn(context: RequestContext, own: string): void {
  const operator = context.principal!.operator;
  if (operator === null || operator === own) return;
  throw new ProblemError(403, 'PLATFORM_ADMIN_REQUIRED', "Operators are managed by the platform's admin; an operator's admin reads only its own.");
}

@Resolver()
export class OperatorResolver {
  constructor(
    private readonly service: OperatorService,
    private readonly credentials: CredentialService,
  ) {}

  #out = (view: OperatorView) => OperatorType.from(view, this.credentials.operatorDid(view.id));

  @Authorized(PLATFORM_ADMIN)
  @Query(() => [OperatorType], { description: 'Every operator, by id (platform admin).' })
  async operators(): Promise<OperatorType[]> {
    return (await this.service.list()).map(this.#out);
  }

  @Authorized('admin')
  @Query(() => OperatorType, { nullable: true, description: 'One operator (platform admin, or that operator’s admin); null when unknown.' })
  async operator(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<OperatorType | null> {
    return refusalsLogged(context, 'operator', async () => {
      refuseUnlessPlatformOrOwn(context, id);
      const view = await this.service.find(id);
      return view ? this.#out(view) : null;
    });
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => OperatorCreationType, {
    description:
      'Creates an operator with its keys, and its trust node delegated from the platform (POST /operators); for an operator that exists, completes what a failed creation left undone (created false). Platform admin.',
  })
  async createOperator(@Arg('input', () => OperatorInput) input: OperatorInput, @Ctx() context: RequestContext): Promise<OperatorCreationType> {
    const { operator, created } = await this.service.create(input, context.authorization);
    return Object.assign(new OperatorCreationType(), { operator: this.#out(operator), created });
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => OperatorType, {
    nullable: true,
    description:
      'Suspends an operator: its writes are refused, its trust node revoked from now; what it signed before stays verifiable (POST /operators/{id}/suspension). Platform admin; null when unknown.',
  })
  async suspendOperator(@Arg('id', () => ID) id: string, @Ctx() context: RequestContext): Promise<OperatorType | null> {
    const view = await this.service.suspend(id, context.authorization);
    return view ? this.#out(view) : null;
  }
}
