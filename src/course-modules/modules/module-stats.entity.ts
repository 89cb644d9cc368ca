import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row kept by triggers on `modules` (migration ModuleCounts): the number of modules and a version that
 * every write to `modules` bumps. Read by the module list, never written by the service.
 */
@Entity({ name: 'module_stats' })
@Check('ck_module_stats_single_row', '"id"')
export class ModuleStats {
  @PrimaryColumn({ type: 'boolean', default: true })
  id!: boolean;

  @Column({ type: 'bigint' })
  total!: number;

  @Column({ type: 'bigint' })
  version!: number;
}
