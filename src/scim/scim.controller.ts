import {
  All,
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { type AuthUser, CurrentUser, IntegrationTokens } from '../core/decorators.js';
import { WithOwnAnswers } from '../core/own-answers.js';
import { Inject } from '@nestjs/common';
import {
  SCIM_CONTENT_TYPE,
  SCIM_NOT_IMPLEMENTED_MESSAGE,
  scimAnswers,
  ScimError,
  scimForbidden,
} from './scim.errors.js';
import { listResponse, serviceProviderConfig, userResourceType, userSchema } from './scim-discovery.js';
import { USER_SCHEMA } from './scim-path.js';
import { readScimListParams, type ScimCaller, type ScimListQuery, ScimService } from './scim.service.js';

export const SCIM_PREFIX = 'scim/v2';

/** A SCIM route: SCIM's bodies and errors, never the envelope (docs/api.md §14). */
const Scim = () => WithOwnAnswers(scimAnswers);
/** A SCIM route that answers a body. */
const ScimBody = () => applyDecorators(Scim(), Header('Content-Type', SCIM_CONTENT_TYPE));

/**
 * SCIM 2.0 (RFC 7643/7644) for an identity provider: Users only, with an integration token of scope `scim`
 * (a user's token → 401, a token without the scope → 403). Registered only when SCIM_ENABLED=true; documented in
 * the OpenAPI document by hand (scim.openapi.ts), as its bodies are SCIM's.
 */
@ApiExcludeController()
@IntegrationTokens({ scope: 'scim', only: true, wrongScope: scimForbidden })
@Controller(SCIM_PREFIX)
export class ScimController {
  constructor(
    private readonly scim: ScimService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** `…/api/scim/v2`, absolute: PUBLIC_BASE_URL, else the request's scheme and host. */
  private base(request: FastifyRequest): string {
    const origin = this.config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
    return `${origin}/api/${SCIM_PREFIX}`;
  }

  private caller(request: FastifyRequest, user: AuthUser, context: RequestContext): ScimCaller {
    return { context, tokenId: user.integration!.tokenId, base: this.base(request) };
  }

  @Get('ServiceProviderConfig')
  @ScimBody()
  serviceProviderConfig(@Req() request: FastifyRequest) {
    return serviceProviderConfig(this.base(request));
  }

  @Get('ResourceTypes')
  @ScimBody()
  resourceTypes(@Req() request: FastifyRequest) {
    return listResponse([userResourceType(this.base(request))], 1, 1);
  }

  @Get('ResourceTypes/:name')
  @ScimBody()
  resourceType(@Req() request: FastifyRequest, @Param('name') name: string) {
    if (name !== 'User') throw new ScimError(404, 'Resource type not found');
    return userResourceType(this.base(request));
  }

  @Get('Schemas')
  @ScimBody()
  schemas(@Req() request: FastifyRequest) {
    return listResponse([userSchema(this.base(request))], 1, 1);
  }

  @Get('Schemas/:urn')
  @ScimBody()
  schema(@Req() request: FastifyRequest, @Param('urn') urn: string) {
    if (urn.toLowerCase() !== USER_SCHEMA.toLowerCase()) throw new ScimError(404, 'Schema not found');
    return userSchema(this.base(request));
  }

  @Get('Users')
  @ScimBody()
  list(@Req() request: FastifyRequest, @Query() query: ScimListQuery) {
    return this.scim.list(readScimListParams(query), this.base(request));
  }

  @Post('Users')
  @HttpCode(201)
  @ScimBody()
  async create(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: unknown,
    @CurrentUser() user: AuthUser,
    @RequestCtx() context: RequestContext,
  ) {
    const { resource, location } = await this.scim.create(body, this.caller(request, user, context));
    void reply.header('Location', location);
    return resource;
  }

  @Get('Users/:id')
  @ScimBody()
  get(@Req() request: FastifyRequest, @Param('id') id: string) {
    return this.scim.get(id, this.base(request));
  }

  @Put('Users/:id')
  @ScimBody()
  replace(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentUser() user: AuthUser,
    @RequestCtx() context: RequestContext,
  ) {
    return this.scim.replace(id, body, this.caller(request, user, context));
  }

  @Patch('Users/:id')
  @ScimBody()
  patch(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @CurrentUser() user: AuthUser,
    @RequestCtx() context: RequestContext,
  ) {
    return this.scim.patch(id, body, this.caller(request, user, context));
  }

  @Delete('Users/:id')
  @HttpCode(204)
  @Scim()
  async remove(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @CurrentUser() user: AuthUser,
    @RequestCtx() context: RequestContext,
  ): Promise<void> {
    await this.scim.remove(id, this.caller(request, user, context));
  }

  @Get('Groups')
  @ScimBody()
  groups() {
    return listResponse([], 0, 1);
  }

  /** Groups beyond the empty list, Bulk and Me → 501; any other path → 404. */
  @All('*')
  @ScimBody()
  other(@Req() request: FastifyRequest): never {
    const rest = request.url.split('?')[0].slice(`/api/${SCIM_PREFIX}/`.length).toLowerCase();
    if (/^(groups|bulk|me)(\/|$)/.test(rest)) throw new ScimError(501, SCIM_NOT_IMPLEMENTED_MESSAGE);
    throw new ScimError(404, 'Route not found');
  }
}
