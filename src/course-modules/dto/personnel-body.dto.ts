import { IsIdList, IsModuleRoleName, USER_IDS_MESSAGES } from '../module-rules.js';

/** `{user_ids, role}` of personnel assignment and removal; `role` in any accepted spelling. */
export class PersonnelBodyDto {
  @IsIdList(USER_IDS_MESSAGES)
  user_ids!: number[];

  @IsModuleRoleName()
  role!: string;
}

/** `{user_ids}` of student enrolment and removal. */
export class StudentsBodyDto {
  @IsIdList(USER_IDS_MESSAGES)
  user_ids!: number[];
}
