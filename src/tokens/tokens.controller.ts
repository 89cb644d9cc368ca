import { Body, Controller, Delete, Get, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { AdminOnly, ResponseMessage } from '../core/decorators.js';
import { ApiErrors, ApiOk } from '../openapi/openapi.js';
import { CreateTokenDto } from './dto/create-token.dto.js';
import { type TokenResponse } from './token.mapper.js';
import { TOKEN_NOT_FOUND_MESSAGE } from './token.errors.js';
import { EXPIRES_AT_MESSAGE, NAME_MESSAGE, SCOPES_MESSAGE } from './token-rules.js';
import { TokenId } from './token-id.param.js';
import { CreatedTokenSchema, TokenListSchema } from './token.schemas.js';
import { TokensService } from './tokens.service.js';

/** docs/api.md §14: integration tokens, managed by administrators. */
@ApiTags('Integration tokens')
@AdminOnly()
@Controller('tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @ResponseMessage('Token created')
  @ApiOperation({
    summary: 'Create an integration token for SCIM provisioning, the change feed or the LMS roster exports',
    description:
      'The answer carries the `token` (`mas_` + 43 base64url characters); it is never shown again (only its ' +
      'SHA-256 is stored). A token works only where one of its scopes applies: `scim` on /api/scim/v2, ' +
      '`events` on `GET /api/events`, `exports` on `GET /api/exports/oneroster-1.1.zip` and ' +
      '`GET /api/exports/canvas-sis.zip`; anywhere else it is 401.',
  })
  @ApiOk(201, 'Token created', CreatedTokenSchema)
  @ApiErrors({ 400: [NAME_MESSAGE, SCOPES_MESSAGE, EXPIRES_AT_MESSAGE] })
  create(
    @Body() body: CreateTokenDto,
    @RequestCtx() context: RequestContext,
  ): Promise<TokenResponse & { token: string }> {
    return this.tokens.create(body, context);
  }

  @Get()
  @ResponseMessage('Tokens retrieved successfully')
  @ApiOperation({
    summary: 'List the tokens not revoked (expired ones included), by id',
    description: 'Never the token text.',
  })
  @ApiOk(200, 'Tokens retrieved successfully', TokenListSchema)
  list(): Promise<TokenResponse[]> {
    return this.tokens.list();
  }

  @Delete(':token_id')
  @ResponseMessage('Token revoked')
  @ApiOperation({
    summary: 'Revoke a token',
    description: 'Refused on this replica at once and on every replica within 5 seconds.',
  })
  @ApiOk(200, 'Token revoked', null)
  @ApiErrors({ 400: ['token_id must be a positive integer'], 404: [TOKEN_NOT_FOUND_MESSAGE] })
  async revoke(@TokenId() id: string, @RequestCtx() context: RequestContext): Promise<null> {
    await this.tokens.revoke(id, context);
    return null;
  }
}
