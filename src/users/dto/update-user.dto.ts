import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsString, Length, Matches, ValidateIf } from 'class-validator';
import {
  ADMIN_MESSAGE,
  EMAIL_MESSAGE,
  EMAIL_OPTIONS,
  EMAIL_SCHEMA,
  PASSWORD_MAX,
  PASSWORD_MESSAGE,
  PASSWORD_MIN,
  USERNAME_MAX,
  USERNAME_MESSAGE,
  USERNAME_PATTERN,
} from '../user-rules.js';
import { Active, DisplayName, ExternalId, FamilyName, GivenName } from './user-fields.js';

/** Any of the fields; an omitted field is left as it is; null clears a name or external_id and is refused elsewhere. */
export class UpdateUserDto {
  @ApiPropertyOptional({
    minLength: 3,
    maxLength: USERNAME_MAX,
    pattern: USERNAME_PATTERN.source,
    description: 'Unique, case-insensitively.',
    example: 'john.smith',
  })
  @ValidateIf((dto: UpdateUserDto) => dto.username !== undefined)
  @IsString({ message: USERNAME_MESSAGE })
  @Matches(USERNAME_PATTERN, { message: USERNAME_MESSAGE })
  username?: string;

  @ApiPropertyOptional({
    pattern: EMAIL_SCHEMA.pattern,
    description: `${EMAIL_SCHEMA.description} Stored lower-case; unique, case-insensitively.`,
    example: 'john.smith@example.edu',
  })
  @ValidateIf((dto: UpdateUserDto) => dto.email !== undefined)
  @IsString({ message: EMAIL_MESSAGE })
  @IsEmail(EMAIL_OPTIONS, { message: EMAIL_MESSAGE })
  email?: string;

  @ApiPropertyOptional({
    minLength: PASSWORD_MIN,
    maxLength: PASSWORD_MAX,
    format: 'password',
    description: 'Counted in Unicode code points. Tokens the user was issued before the change stop working.',
    example: 'new-horse-battery',
  })
  @ValidateIf((dto: UpdateUserDto) => dto.password !== undefined)
  @IsString({ message: PASSWORD_MESSAGE })
  // class-validator's Length counts code points (surrogate pairs as one), as docs/api.md §1 asks.
  @Length(PASSWORD_MIN, PASSWORD_MAX, { message: PASSWORD_MESSAGE })
  password?: string;

  @ApiPropertyOptional({
    type: 'boolean',
    description: 'An administrator cannot remove their own admin rights.',
    example: true,
  })
  @ValidateIf((dto: UpdateUserDto) => dto.admin !== undefined)
  @IsBoolean({ message: ADMIN_MESSAGE })
  admin?: boolean;

  @GivenName()
  given_name?: string | null;

  @FamilyName()
  family_name?: string | null;

  @DisplayName()
  display_name?: string | null;

  @ExternalId()
  external_id?: string | null;

  @Active(
    'false deactivates the user (not yourself): sign-in refused, tokens refused within 5 s, memberships kept.',
  )
  active?: boolean;
}
