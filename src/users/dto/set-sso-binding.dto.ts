import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

export const SSO_ISSUER_MESSAGE = 'issuer must be a string of 1-255 characters without control characters';
export const SSO_SUBJECT_MESSAGE = 'subject must be a string of 1-255 characters without control characters';

/** No control characters: PostgreSQL's text cannot hold U+0000, and no IdP writes any into `iss` or `sub`. */
const NO_CONTROL_CHARACTERS = /^[^\p{Cc}]*$/u;

/** One half of an IdP identity: 1-255 characters without control characters, refused with `message`. */
function IdentityPart(message: string, description: string, example: string): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ minLength: 1, maxLength: 255, description, example }),
    IsString({ message }),
    Length(1, 255, { message }),
    Matches(NO_CONTROL_CHARACTERS, { message }),
  );
}

/** `PUT /api/users/{user_id}/sso-binding`: the IdP identity (`iss`, `sub`) the user's IdP tokens carry. */
export class SetSsoBindingDto {
  @IdentityPart(
    SSO_ISSUER_MESSAGE,
    "The identity provider's `iss`, exactly as in its tokens (OIDC_ISSUER).",
    'https://login.example.edu/realms/university',
  )
  issuer!: string;

  @IdentityPart(
    SSO_SUBJECT_MESSAGE,
    "The person's `sub` at the identity provider, exactly as in their tokens.",
    'f3b2c1d0-8a7e-4c6b-9d5f-0e1a2b3c4d5e',
  )
  subject!: string;
}
