import { IsIdList, MODULE_IDS_MESSAGES } from '../module-rules.js';

export class BulkDeleteDto {
  @IsIdList(MODULE_IDS_MESSAGES)
  module_ids!: number[];
}
