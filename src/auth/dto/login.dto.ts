import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export const LOGIN_USERNAME_MESSAGE = 'username must be a string of 1-320 characters';
export const LOGIN_PASSWORD_MESSAGE = 'password must be a string of 1-1024 characters';

export class LoginDto {
  @ApiProperty({ description: 'Case-insensitive', minLength: 1, maxLength: 320, example: 'admin' })
  @IsString({ message: LOGIN_USERNAME_MESSAGE })
  @Length(1, 320, { message: LOGIN_USERNAME_MESSAGE })
  username!: string;

  @ApiProperty({ minLength: 1, maxLength: 1024, format: 'password', example: 'correct-horse-battery' })
  @IsString({ message: LOGIN_PASSWORD_MESSAGE })
  @Length(1, 1024, { message: LOGIN_PASSWORD_MESSAGE })
  password!: string;
}
