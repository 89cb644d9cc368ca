import { Controller, Get, Headers, Param, Put, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type RequestContext } from '../audit/audit-actions.js';
import { RequestCtx } from '../audit/request-context.decorator.js';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { AdminOnly, ResponseMessage } from '../core/decorators.js';
import { IdPipe } from '../core/id.pipe.js';
import { ApiErrors, ApiOk } from '../openapi/openapi.js';
import {
  MALFORMED_MULTIPART_MESSAGE,
  MalformedMultipart,
  NO_FILE_UPLOADED_MESSAGE,
  TOO_MANY_FILES_MESSAGE,
  UnsupportedContentType,
} from '../uploads/upload.errors.js';
import { UserAccountSchema } from './user.schemas.js';
import { type ImageType } from './image-type.js';
import { AvatarService } from './avatar.service.js';
import { type UserAccount } from './user.shape.js';
import { REQUEST_BODY_TOO_LARGE_MESSAGE, UNSUPPORTED_CONTENT_TYPE_MESSAGE } from '../core/errors.js';
import {
  AVATAR_NOT_FOUND_MESSAGE,
  FILE_TOO_LARGE_MESSAGE,
  UNSUPPORTED_FILE_TYPE_MESSAGE,
  USER_NOT_FOUND_MESSAGE,
} from './users.errors.js';

const AVATAR_CACHE_CONTROL = 'private, no-cache';

/** Whether an `If-None-Match` header matches `etag` (weak comparison, `*` included). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

const IMAGE_TYPES: ImageType[] = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const VALIDATOR_HEADERS = {
  ETag: { description: 'Changes with every upload.', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string', example: AVATAR_CACHE_CONTROL } },
};

/** Avatar upload (admin) and read (any authenticated user). Not admin-only as a class: the GET is open. */
@ApiTags('Users')
@Controller('users/:user_id/avatar')
export class AvatarController {
  constructor(private readonly avatars: AvatarService) {}

  @AdminOnly()
  @Put()
  @ResponseMessage('Avatar uploaded successfully')
  @ApiOperation({
    summary: "Upload a user's avatar",
    description:
      'PNG, JPEG, GIF or WebP, recognised by content (the declared type is ignored), at most 2 MiB ' +
      '(2 097 152 bytes). Other form fields are ignored. A failed upload leaves the previous avatar in place.',
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['file'],
      properties: { file: { type: 'string', format: 'binary', description: 'The image, one part only.' } },
    },
  })
  @ApiOk(200, 'Avatar uploaded successfully', UserAccountSchema)
  @ApiErrors({
    400: [NO_FILE_UPLOADED_MESSAGE, TOO_MANY_FILES_MESSAGE, MALFORMED_MULTIPART_MESSAGE],
    404: [USER_NOT_FOUND_MESSAGE],
    413: [FILE_TOO_LARGE_MESSAGE, REQUEST_BODY_TOO_LARGE_MESSAGE],
    415: [UNSUPPORTED_CONTENT_TYPE_MESSAGE, UNSUPPORTED_FILE_TYPE_MESSAGE],
  })
  async upload(
    @Param('user_id', new IdPipe('user_id')) id: string,
    @Req() request: FastifyRequest,
    @RequestCtx() context: RequestContext,
  ): Promise<UserAccount> {
    // The content-type middleware has answered anything else already; this covers a parser that disagrees.
    if (!request.isMultipart()) throw new UnsupportedContentType();
    // A body left half-read by an error is drained after the answer (http/early-answers.ts).
    return this.avatars.upload(
      id,
      () => {
        // A client gone before reading began: the parser would wait for a 'close' that has already happened.
        if (request.raw.destroyed) throw new MalformedMultipart();
        return request.parts();
      },
      context,
    );
  }

  @Get()
  @ApiOperation({ summary: "A user's avatar image (any signed-in user)" })
  @ApiResponse({
    status: 200,
    description: 'The image bytes with their content type.',
    headers: VALIDATOR_HEADERS,
    content: Object.fromEntries(
      IMAGE_TYPES.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]),
    ),
  })
  @ApiResponse({
    status: 304,
    description: 'The If-None-Match header matches the current ETag; no body.',
    headers: VALIDATOR_HEADERS,
  })
  @ApiErrors({ 404: [USER_NOT_FOUND_MESSAGE, AVATAR_NOT_FOUND_MESSAGE] })
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
