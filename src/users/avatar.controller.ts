import { Controller, Get, Headers, Param, Put, Req, Res, StreamableFile } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { AdminOnly, ResponseMessage } from '../core/decorators.js';
import { IdPipe } from '../core/id.pipe.js';
import { AvatarService } from './avatar.service.js';
import { type UserSummary } from './user.mapper.js';
import { NotMultipart } from './users.errors.js';

export const AVATAR_CACHE_CONTROL = 'private, no-cache';

/** Whether an `If-None-Match` header matches `etag` (weak comparison, `*` included). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/** Avatar upload (admin) and read (any authenticated user). Not admin-only as a class: the GET is open. */
@Controller('users/:user_id/avatar')
export class AvatarController {
  constructor(private readonly avatars: AvatarService) {}

  @AdminOnly()
  @Put()
  @ResponseMessage('Avatar uploaded successfully')
  async upload(
    @Param('user_id', new IdPipe('user_id')) id: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UserSummary> {
    // MultipartOnlyMiddleware has answered anything else already; this covers a parser that disagrees.
    if (!request.isMultipart()) throw new NotMultipart();
    try {
      return await this.avatars.upload(id, request.parts());
    } catch (error) {
      // A body left half-read would hold the connection: close it after this answer.
      if (!request.raw.complete) void reply.header('connection', 'close');
      throw error;
    }
  }

  @Get()
  async read(
    @Param('user_id', new IdPipe('user_id')) id: string,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StreamableFile> {
    const avatar = await this.avatars.find(id);
    void reply.header('etag', avatar.etag).header('cache-control', AVATAR_CACHE_CONTROL);
    void reply.header('x-content-type-options', 'nosniff');
    if (matchesEtag(ifNoneMatch, avatar.etag)) {
      // Content-Length may only state the size a 200 would have (RFC 9110 §8.6); no body is sent.
      void reply.status(304);
      return new StreamableFile(Buffer.alloc(0), { type: avatar.contentType, length: avatar.size });
    }
    return new StreamableFile(avatar.open(), { type: avatar.contentType, length: avatar.size });
  }
}
