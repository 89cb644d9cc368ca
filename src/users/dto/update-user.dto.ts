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

/** Any of the fields; an omitted field is left as it is; null clears a name or external_id and is refused elsewhere. */
export class UpdateUserDto {
  @Username('optional', 'john.smith')
  username?: string;

  @Email('optional', 'john.smith@example.edu')
  email?: string;

  @Password(
    'optional',
    'Counted in Unicode code points. Tokens the user was issued before the change stop working.',
    'new-horse-battery',
  )
  password?: string;

  @Admin({ description: 'An administrator cannot remove their own admin rights.', example: true })
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
