import { Param } from '@nestjs/common';
import { IdPipe } from '../core/id.pipe.js';

/** The `token_id` path parameter as an exact decimal string (400 unless a positive 64-bit integer). */
export const TokenId = () => Param('token_id', new IdPipe('token_id'));
