import { IsString, Length } from 'class-validator';

export class LoginDto {
  @IsString({ message: 'username must be a string of 1-320 characters' })
  @Length(1, 320, { message: 'username must be a string of 1-320 characters' })
  username!: string;

  @IsString({ message: 'password must be a string of 1-1024 characters' })
  @Length(1, 1024, { message: 'password must be a string of 1-1024 characters' })
  password!: string;
}
