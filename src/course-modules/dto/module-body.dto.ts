import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import {
  CODE_MESSAGE,
  CREDITS_MAX,
  CREDITS_MESSAGE,
  CREDITS_MIN,
  IsModuleDescription,
  YEAR_MAX,
  YEAR_MESSAGE,
  YEAR_MIN,
} from '../module-rules.js';

/** The fields of a module as a client sends them on create and edit. */
export interface ModuleInput {
  code: string;
  year: number;
  description?: string | null;
  credits: number;
}

/**
 * The create / edit body. Validated by {@link ModuleBodyPipe}, which adds the configured code pattern
 * (a decorator cannot see config); fields are declared in the order their messages are joined.
 */
export class ModuleBodyDto implements ModuleInput {
  @IsString({ message: CODE_MESSAGE })
  code!: string;

  @IsInt({ message: YEAR_MESSAGE })
  @Min(YEAR_MIN, { message: YEAR_MESSAGE })
  @Max(YEAR_MAX, { message: YEAR_MESSAGE })
  year!: number;

  @IsOptional()
  @IsModuleDescription()
  description?: string | null;

  @IsInt({ message: CREDITS_MESSAGE })
  @Min(CREDITS_MIN, { message: CREDITS_MESSAGE })
  @Max(CREDITS_MAX, { message: CREDITS_MESSAGE })
  credits!: number;
}
