import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';
import { CourseModule } from './course-module.entity.js';
import { ModuleRole } from './module-role.js';

/**
 * One user's one role in one module. The primary key (user_id, module_id) serves "modules of a user";
 * the role index serves "people of a module, by role".
 */
@Entity({ name: 'user_module_roles' })
@Index('ix_user_module_roles_module_role', ['moduleId', 'role'])
export class UserModuleRole {
  @PrimaryColumn({ name: 'user_id', type: 'bigint' })
  userId!: number;

  @PrimaryColumn({ name: 'module_id', type: 'bigint' })
  moduleId!: number;

  @Column({ type: 'enum', enum: ModuleRole, enumName: 'module_role' })
  role!: ModuleRole;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'user_module_roles_user_id_fkey' })
  user?: Relation<User>;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id', foreignKeyConstraintName: 'user_module_roles_module_id_fkey' })
  module?: Relation<CourseModule>;
}
