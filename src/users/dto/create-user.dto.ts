import {
  Active,
  Admin,
  DisplayName,
  Email,
  ExternalId,
  FamilyName,
  GivenName,
  Password,
  Username,
} from './user-fields.js';

export class CreateUserDto {
  @Username('required', 'jsmith')
  username!: string;

  @Email('required', 'jsmith@example.edu')
  email!: string;

  @Password('required', 'Counted in Unicode code points.', 'correct-horse-battery')
  password!: string;

  @Admin({ default: false, example: false })
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
