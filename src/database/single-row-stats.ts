import { Column, PrimaryColumn } from 'typeorm';

/**
 * The columns of a one-row statistics table kept by triggers on its table (`module_stats`, `user_stats`): the
 * number of rows and a version that every write to the table bumps at its commit. The service only reads them.
 */
export abstract class SingleRowStats {
  @PrimaryColumn({ type: 'boolean', default: true })
  id!: boolean;

  @Column({ type: 'bigint' })
  total!: number;

  @Column({ type: 'bigint' })
  version!: number;
}
