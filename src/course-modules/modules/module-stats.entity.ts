import { Check, Entity } from 'typeorm';
import { SingleRowStats } from '../../database/single-row-stats.js';

/**
 * One row kept by triggers on `modules` (migration ModuleCounts). Read by the module list, never written by the
 * service.
 */
@Entity({ name: 'module_stats' })
@Check('ck_module_stats_single_row', '"id"')
export class ModuleStats extends SingleRowStats {}
