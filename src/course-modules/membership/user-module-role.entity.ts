import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { User } from '../../users/user.entity.js';
import { CourseModule } from '../modules/course-module.entity.js';
import { MembershipStatus } from './membership-status.js';
import { ModuleRole } from '../modules/module-role.js';

/** The effective status a change event last reported for a row (migration MembershipLifecycle). */
const REPORTED_STATUSES = ['active', 'upcoming', 'completed', 'inactive'];

/**
 * One user's one role in one module. The primary key (user_id, module_id) serves "modules of a user";
 * the role index serves "people of a module, by role", and with the username index the people lists' default
 * order (migration MemberListsAtScale). The lifecycle's indexes (a covering one for the member's
 * own reads, partial ones for the time sweep) are created by migration MembershipLifecycle: the schema builder
 * cannot express INCLUDE or a predicate.
 */
@Entity({ name: 'user_module_roles' })
@Index('ix_user_module_roles_module_role', ['moduleId', 'role', 'usernameKey', 'userId'])
@Index('ix_user_module_roles_module_username', ['moduleId', 'usernameKey', 'userId'])
@Index('ix_user_module_roles_member', { synchronize: false })
@Index('ix_user_module_roles_opening', { synchronize: false })
@Index('ix_user_module_roles_closing', { synchronize: false })
@Check('ck_user_module_roles_dates', '"ends_at" > "starts_at"')
export class UserModuleRole {
  @PrimaryColumn({ name: 'user_id', type: 'bigint' })
  userId!: number;

  @PrimaryColumn({ name: 'module_id', type: 'bigint' })
  moduleId!: number;

  @Column({ type: 'enum', enum: ModuleRole, enumName: 'module_role' })
  role!: ModuleRole;

  @Column({
    type: 'enum',
    enum: MembershipStatus,
    enumName: 'membership_status',
    default: MembershipStatus.Active,
  })
  status!: MembershipStatus;

  @Column({ name: 'starts_at', type: 'timestamptz', precision: 3, nullable: true })
  startsAt!: Date | null;

  @Column({ name: 'ends_at', type: 'timestamptz', precision: 3, nullable: true })
  endsAt!: Date | null;

  /**
   * `lower(username)` of the row's user, the people lists' default order: set by triggers on this table and on
   * `users` (migration MemberListsAtScale), never by the service.
   */
  @Column({ name: 'username_key', type: 'text', select: false, insert: false, update: false })
  usernameKey!: string;

  /** Set by a trigger and by the time sweep (membership-sweep.ts), never by the service's writes. */
  @Column({
    name: 'reported_status',
    type: 'enum',
    enum: REPORTED_STATUSES,
    enumName: 'membership_effective_status',
    default: 'active',
  })
  reportedStatus!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  /**
   * When `status` was last set: a trigger (migration LmsExports) stamps every change of it. The end date of a
   * `completed` membership without `ends_at` in the LMS exports (docs/api.md §16).
   */
  @Column({ name: 'status_set_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  statusSetAt!: Date;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'user_module_roles_user_id_fkey' })
  user?: Relation<User>;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id', foreignKeyConstraintName: 'user_module_roles_module_id_fkey' })
  module?: Relation<CourseModule>;
}
