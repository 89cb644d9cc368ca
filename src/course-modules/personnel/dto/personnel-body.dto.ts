import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { MODULE_ROLES } from '../../modules/module-role.js';
import { type MembershipStatus } from '../../membership/membership-status.js';
import {
  EndsAtField,
  type MembershipFields,
  StartsAtField,
  StatusField,
} from '../../membership/dto/membership-fields.js';
import { ID_LIST_MAX, IsIdList, IsModuleRoleName, USER_IDS_MESSAGES } from '../../modules/module-rules.js';

/** `user_ids`: the users the operation names. */
const UserIds = () =>
  applyDecorators(
    ApiProperty({
      type: 'array',
      items: { type: 'integer', format: 'int64' },
      minItems: 1,
      maxItems: ID_LIST_MAX,
      description: 'Every user must exist; repeated ids count once.',
      // User 2 is `jsmith`, the user the example of POST /api/users creates on a fresh installation.
      example: [2],
    }),
    IsIdList(USER_IDS_MESSAGES),
  );

/** `role`, in any accepted spelling. */
const RoleName = () =>
  applyDecorators(
    ApiProperty({
      type: 'string',
      enum: MODULE_ROLES,
      description: 'Also accepted case-insensitively and in snake case (`assistant_lecturer`).',
      example: 'Tutor',
    }),
    IsModuleRoleName(),
  );

/** `{user_ids, role}` of personnel assignment and removal; `role` in any accepted spelling. */
export class PersonnelBodyDto {
  @UserIds()
  user_ids!: number[];

  @RoleName()
  role!: string;
}

/** `{user_ids}` of student enrolment and removal. */
export class StudentsBodyDto {
  @UserIds()
  user_ids!: number[];
}

/** `{user_ids, role, status?, starts_at?, ends_at?}` of personnel assignment (docs/api.md §4.1, §15). */
export class PersonnelAssignBodyDto implements MembershipFields {
  // Declared here rather than inherited: class-validator reports an inherited field after the class's own.
  @UserIds()
  user_ids!: number[];

  @RoleName()
  role!: string;

  @StatusField()
  status?: MembershipStatus;

  @StartsAtField()
  starts_at?: string | null;

  @EndsAtField()
  ends_at?: string | null;
}

/** `{user_ids, status?, starts_at?, ends_at?}` of student enrolment (docs/api.md §4.2, §15). */
export class StudentsEnrolBodyDto implements MembershipFields {
  @UserIds()
  user_ids!: number[];

  @StatusField()
  status?: MembershipStatus;

  @StartsAtField()
  starts_at?: string | null;

  @EndsAtField()
  ends_at?: string | null;
}

/** `{user_ids, status?, starts_at?, ends_at?}` of `PATCH …/members`: at least one of the three (docs/api.md §15). */
export class MembersPatchBodyDto implements MembershipFields {
  @UserIds()
  user_ids!: number[];

  @StatusField(true)
  status?: MembershipStatus;

  @StartsAtField()
  starts_at?: string | null;

  @EndsAtField()
  ends_at?: string | null;
}
