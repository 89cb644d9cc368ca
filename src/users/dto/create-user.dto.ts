import { IsBoolean, IsEmail, IsString, Matches, ValidateIf } from 'class-validator';
import {
  ADMIN_MESSAGE,
  EMAIL_MESSAGE,
  PASSWORD_MAX,
  PASSWORD_MESSAGE,
  PASSWORD_MIN,
  USERNAME_MESSAGE,
  USERNAME_PATTERN,
} from '../user-rules.js';
import { CodePointLength } from './code-point-length.js';

export class CreateUserDto {
  @IsString({ message: USERNAME_MESSAGE })
  @Matches(USERNAME_PATTERN, { message: USERNAME_MESSAGE })
  username!: string;

  @IsString({ message: EMAIL_MESSAGE })
  @IsEmail({}, { message: EMAIL_MESSAGE })
  email!: string;

  @IsString({ message: PASSWORD_MESSAGE })
  @CodePointLength(PASSWORD_MIN, PASSWORD_MAX, { message: PASSWORD_MESSAGE })
  password!: string;

  // Optional, but null is not "absent": it is refused like any other non-boolean.
  @ValidateIf((dto: CreateUserDto) => dto.admin !== undefined)
  @IsBoolean({ message: ADMIN_MESSAGE })
  admin?: boolean;
}
