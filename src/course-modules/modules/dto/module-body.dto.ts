import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import {
  CODE_MAX,
  CODE_MESSAGE,
  CREDITS_MAX,
  CREDITS_MESSAGE,
  CREDITS_MIN,
  DESCRIPTION_MAX,
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
  @ApiProperty({
    maxLength: CODE_MAX,
    description:
      'Must match MODULE_CODE_PATTERN (default `^[A-Z]{3}[0-9]{3}$`, three capitals and three digits). ' +
      'Unique together with `year`.',
    example: 'CSC101',
  })
  @IsString({ message: CODE_MESSAGE })
  code!: string;

  @ApiProperty({ type: 'integer', format: 'int32', minimum: YEAR_MIN, maximum: YEAR_MAX, example: 2026 })
  @IsInt({ message: YEAR_MESSAGE })
  @Min(YEAR_MIN, { message: YEAR_MESSAGE })
  @Max(YEAR_MAX, { message: YEAR_MESSAGE })
  year!: number;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: DESCRIPTION_MAX,
    description: 'Counted in Unicode code points; omitted or null stores null, an empty string stays empty.',
    example: 'Introduction to Computer Science',
  })
  @IsOptional()
  @IsModuleDescription()
  description?: string | null;

  @ApiProperty({ type: 'integer', format: 'int32', minimum: CREDITS_MIN, maximum: CREDITS_MAX, example: 15 })
  @IsInt({ message: CREDITS_MESSAGE })
  @Min(CREDITS_MIN, { message: CREDITS_MESSAGE })
  @Max(CREDITS_MAX, { message: CREDITS_MESSAGE })
  credits!: number;
}
