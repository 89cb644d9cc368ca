import { ApiProperty } from '@nestjs/swagger';
import { ID_LIST_MAX, IsIdList, MODULE_IDS_MESSAGES } from '../module-rules.js';

export class BulkDeleteDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'integer', format: 'int64' },
    minItems: 1,
    maxItems: ID_LIST_MAX,
    description: 'Ids with no module, and repeats of an id, are reported in `failed` rather than refused.',
    example: [1],
  })
  @IsIdList(MODULE_IDS_MESSAGES)
  module_ids!: number[];
}
