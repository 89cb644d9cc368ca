import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row kept by triggers on `users` (migration UserStats): the number of users and a version that every write
 * to `users` bumps at its commit. Read by the user list, never written by the service.
 */
@Entity({ name: 'user_stats' })
@Check('ck_user_stats_single_row', '"id"')
export class UserStats {
  @PrimaryColumn({ type: 'boolean', default: true })
  id!: boolean;

  @Column({ type: 'bigint' })
  total!: number;

  @Column({ type: 'bigint' })
  version!: number;
}
