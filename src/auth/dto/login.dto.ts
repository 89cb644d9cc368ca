import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class LoginDto {
  @ApiProperty({ description: 'Case-insensitive', minLength: 1, maxLength: 320, example: 'admin' })
  @IsString({ message: 'username must be a string of 1-320 characters' })
  @Length(1, 320, { message: 'username must be a string of 1-320 characters' })
  username!: string;

  @ApiProperty({ minLength: 1, maxLength: 1024, format: 'password', example: 'correct-horse-battery' })
  @IsString({ message: 'password must be a string of 1-1024 characters' })
  @Length(1, 1024, { message: 'password must be a string of 1-1024 characters' })
  password!: string;
}
