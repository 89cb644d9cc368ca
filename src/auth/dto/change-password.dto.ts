import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { PASSWORD_MAX, PASSWORD_MESSAGE, PASSWORD_MIN } from '../../users/user-rules.js';

export const CURRENT_PASSWORD_MESSAGE = 'current_password must be a string of 1-1024 characters';

export class ChangePasswordDto {
  @ApiProperty({ minLength: 1, maxLength: 1024, format: 'password', example: 'correct-horse-battery' })
  @IsString({ message: CURRENT_PASSWORD_MESSAGE })
  @Length(1, 1024, { message: CURRENT_PASSWORD_MESSAGE })
  current_password!: string;

  @ApiProperty({
    minLength: PASSWORD_MIN,
    maxLength: PASSWORD_MAX,
    format: 'password',
    example: 'new-horse-battery',
  })
  @IsString({ message: PASSWORD_MESSAGE })
  @Length(PASSWORD_MIN, PASSWORD_MAX, { message: PASSWORD_MESSAGE })
  new_password!: string;
}
