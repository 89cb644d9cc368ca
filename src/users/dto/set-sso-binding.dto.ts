import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

export const SSO_ISSUER_MESSAGE = 'issuer must be a string of 1-255 characters without control characters';
export const SSO_SUBJECT_MESSAGE = 'subject must be a string of 1-255 characters without control characters';

/** No control characters: PostgreSQL's text cannot hold U+0000, and no IdP writes any into `iss` or `sub`. */
const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

/** `PUT /api/users/{user_id}/sso-binding`: the IdP identity (`iss`, `sub`) the user's IdP tokens carry. */
export class SetSsoBindingDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 255,
    description: "The identity provider's `iss`, exactly as in its tokens (OIDC_ISSUER).",
    example: 'https://login.example.edu/realms/university',
  })
  @IsString({ message: SSO_ISSUER_MESSAGE })
  @Length(1, 255, { message: SSO_ISSUER_MESSAGE })
  @Matches(NO_CONTROL_CHARACTERS, { message: SSO_ISSUER_MESSAGE })
  issuer!: string;

  @ApiProperty({
    minLength: 1,
    maxLength: 255,
    description: "The person's `sub` at the identity provider, exactly as in their tokens.",
    example: 'f3b2c1d0-8a7e-4c6b-9d5f-0e1a2b3c4d5e',
  })
  @IsString({ message: SSO_SUBJECT_MESSAGE })
  @Length(1, 255, { message: SSO_SUBJECT_MESSAGE })
  @Matches(NO_CONTROL_CHARACTERS, { message: SSO_SUBJECT_MESSAGE })
  subject!: string;
}
