import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
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

export class CreateUserDto {
  @ApiProperty({
    minLength: 3,
    maxLength: USERNAME_MAX,
    pattern: USERNAME_PATTERN.source,
    description: 'Unique, case-insensitively.',
    example: 'jsmith',
  })
  @IsString({ message: USERNAME_MESSAGE })
  @Matches(USERNAME_PATTERN, { message: USERNAME_MESSAGE })
  username!: string;

  @ApiProperty({
    pattern: EMAIL_SCHEMA.pattern,
    description: `${EMAIL_SCHEMA.description} Stored lower-case; unique, case-insensitively.`,
    example: 'jsmith@example.edu',
  })
  @IsString({ message: EMAIL_MESSAGE })
  @IsEmail(EMAIL_OPTIONS, { message: EMAIL_MESSAGE })
  email!: string;

  @ApiProperty({
    minLength: PASSWORD_MIN,
    maxLength: PASSWORD_MAX,
    format: 'password',
    description: 'Counted in Unicode code points.',
    example: 'correct-horse-battery',
  })
  @IsString({ message: PASSWORD_MESSAGE })
  // class-validator's Length counts code points (surrogate pairs as one), as docs/api.md §1 asks.
  @Length(PASSWORD_MIN, PASSWORD_MAX, { message: PASSWORD_MESSAGE })
  password!: string;

  // Optional, but null is not "absent": it is refused like any other non-boolean.
  @ApiPropertyOptional({ type: 'boolean', default: false, example: false })
  @ValidateIf((dto: CreateUserDto) => dto.admin !== undefined)
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

  @Active('Inactive users cannot sign in; their tokens are refused.')
  active?: boolean;
}
