import { Param } from '@nestjs/common';
import { IdPipe } from '../../core/id.pipe.js';

/** The `{module_id}` path parameter as an exact decimal string; 400 `module_id must be a positive integer`. */
export const ModuleIdParam = () => Param('module_id', new IdPipe('module_id'));
