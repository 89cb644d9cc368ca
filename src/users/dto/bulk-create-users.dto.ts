import { ApiProperty } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { ValidateBy, validateSync } from 'class-validator';
import { VALIDATOR_OPTIONS, validationMessages } from '../../core/validation.js';
import { BULK_EMPTY_MESSAGE, BULK_MAX_USERS, BULK_TOO_MANY_MESSAGE } from '../user-rules.js';
import { CreateUserDto } from './create-user.dto.js';

/**
 * What is wrong with a bulk `users` value, or undefined when every entry is a valid new user. Entry errors name
 * the entry by its 0-based index, each message prefixed: `users[0]: …; users[2]: …`.
 */
export function userListProblem(value: unknown): string | undefined {
  if (value === undefined) return BULK_EMPTY_MESSAGE;
  if (!Array.isArray(value)) return 'users must be an array of users';
  if (value.length === 0) return BULK_EMPTY_MESSAGE;
  if (value.length > BULK_MAX_USERS) return BULK_TOO_MANY_MESSAGE;
  const problems: string[] = [];
  value.forEach((entry: unknown, index) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      problems.push(`users[${index}]: User must be a JSON object`);
      return;
    }
    const errors = validateSync(plainToInstance(CreateUserDto, entry), VALIDATOR_OPTIONS);
    for (const message of validationMessages(errors)) problems.push(`users[${index}]: ${message}`);
  });
  return problems.length > 0 ? problems.join('; ') : undefined;
}

export class BulkCreateUsersDto {
  @ApiProperty({
    type: () => [CreateUserDto],
    minItems: 1,
    maxItems: BULK_MAX_USERS,
    description: 'Created all together or not at all.',
    example: [
      {
        username: 'adoe',
        email: 'adoe@example.edu',
        password: 'correct-horse-battery',
        admin: false,
        given_name: 'Ada',
        family_name: 'Doe',
      },
      {
        username: 'bkhan@example.edu',
        email: 'bkhan@example.edu',
        password: 'correct-horse-battery',
        admin: false,
        display_name: 'Bilal Khan',
        external_id: '3c6e0b8a-9f1d-4e2b-8a7c-5d4f3e2b1a09',
      },
    ],
  })
  // One rule with a message per problem, so the pipe reports it in field order with any unknown property.
  @ValidateBy({
    name: 'userList',
    validator: {
      validate: (value: unknown) => userListProblem(value) === undefined,
      defaultMessage: (args) => userListProblem(args?.value) ?? '',
    },
  })
  users!: CreateUserDto[];
}
