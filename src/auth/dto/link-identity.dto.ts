import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export const LINK_TOKEN_MESSAGE = 'token must be a string of 1-16384 characters';

/** `POST /api/auth/sso-binding`: an access token of the identity provider, for the caller's own identity there. */
export class LinkIdentityDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 16384,
    description: 'An access token the identity provider issued to you, verified like any IdP token.',
    example: 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImtleS0xIiwidHlwIjoiYXQrand0In0.eyJpc3MiOiLigKYifQ.c2lnbmF0dXJl',
  })
  @IsString({ message: LINK_TOKEN_MESSAGE })
  @Length(1, 16384, { message: LINK_TOKEN_MESSAGE })
  token!: string;
}
