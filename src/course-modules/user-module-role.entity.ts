import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { User } from '../users/user.entity.js';
import { CourseModule } from './course-module.entity.js';
import { ModuleRole } from './module-role.js';

/** One user's one role in one module. */
@Entity({ name: 'user_module_roles' })
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
  @JoinColumn({ name: 'user_id' })
  user?: Relation<User>;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id' })
  module?: Relation<CourseModule>;
}
