import { Check, Entity } from 'typeorm';
import { SingleRowStats } from '../database/single-row-stats.js';

/** One row kept by triggers on `users` (migration UserStats). Read by the user list, never written by the service. */
@Entity({ name: 'user_stats' })
@Check('ck_user_stats_single_row', '"id"')
export class UserStats extends SingleRowStats {}
