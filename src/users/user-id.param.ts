import { Param } from '@nestjs/common';
import { IdPipe } from '../core/id.pipe.js';

/** The `user_id` path parameter as an exact decimal string (400 unless a positive 64-bit integer). */
export const UserId = () => Param('user_id', new IdPipe('user_id'));
