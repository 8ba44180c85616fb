/** API tokens, administered by admins (POST /admin/tokens, GET /admin/tokens, POST /admin/tokens/{id}/revocation). */
import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { identityProblem } from '../../../lib/auth/identity-store.js';
import type { TokenAdministration } from '../../../lib/auth/token-administration.js';
import type { Role } from '../../../lib/auth/tokens.js';
import { refusalsLogged, type RequestContext } from '../../../lib/graphql/context.js';
import { refusing } from '../../../lib/problem.js';
import { AccessToken, AccessTokenInput, IssuedAccessToken } from '../schema/access-tokens.js';

const OPERATOR = "The operator whose tokens; omitted: the caller's own (the platform's, for the platform admin). Another operator's admin gets UNKNOWN_OPERATOR.";

@Resolver()
export class AccessTokenResolver {
  constructor(private readonly tokens: TokenAdministration) {}

  @Authorized('admin')
  @Mutation(() => IssuedAccessToken, { description: 'Issues an API token for an operator and role; its secret is in this answer only.' })
  async createAccessToken(@Arg('input', () => AccessTokenInput) input: AccessTokenInput, @Ctx() context: RequestContext): Promise<IssuedAccessToken> {
    const { token, secret } = await refusing(
      () =>
        this.tokens.create(context.principal!, {
          operator: input.operator ?? null,
          role: input.role as Role,
          label: input.label,
          ...(input.expiresAt ? { expiresAt: input.expiresAt } : {}),
        }),
      identityProblem,
    );
    return Object.assign(new IssuedAccessToken(), { token: AccessToken.from(token), secret });
  }

  @Authorized('admin')
  @Query(() => [AccessToken], { description: 'The tokens of an operator, newest first, revoked and expired ones included; never a secret.' })
  async accessTokens(@Arg('operator', () => String, { nullable: true, description: OPERATOR }) operator: string | null | undefined, @Ctx() context: RequestContext): Promise<AccessToken[]> {
    return (await refusalsLogged(context, 'accessTokens', () => refusing(() => this.tokens.list(context.principal!, operator), identityProblem))).map(AccessToken.from);
  }

  @Authorized('admin')
  @Mutation(() => AccessToken, { description: 'Revokes a token: every server refuses it within 5 s (docs/OPERATORS.md). Revoking it again changes nothing.' })
  async revokeAccessToken(
    @Arg('id', () => ID) id: string,
    @Arg('operator', () => String, { nullable: true, description: OPERATOR }) operator: string | null | undefined,
    @Ctx() context: RequestContext,
  ): Promise<AccessToken> {
    return AccessToken.from(await refusing(() => this.tokens.revoke(context.principal!, id, operator), identityProblem));
  }
}
