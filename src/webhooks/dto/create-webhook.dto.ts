import { ApiProperty, type ApiPropertyOptions, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import {
  DESCRIPTION_MAX,
  IsWebhookDescription,
  IsWebhookTypes,
  IsWebhookUrl,
  TYPES_MAX,
  URL_MAX,
} from '../webhook-body-rules.js';
import { ALL_TYPES, SUBSCRIBABLE_TYPES } from '../webhook-types.js';

export const typesProperty: ApiPropertyOptions = {
  type: 'array',
  items: { type: 'string', enum: [ALL_TYPES, ...SUBSCRIBABLE_TYPES] },
  minItems: 1,
  maxItems: TYPES_MAX,
  description: 'The change event types to deliver; `["*"]` for all of them.',
  example: ['module.created', 'module.updated'],
};

export const urlProperty: ApiPropertyOptions = {
  type: 'string',
  format: 'uri',
  maxLength: URL_MAX,
  description:
    'Must be `https://` (or `http://` with WEBHOOK_ALLOW_HTTP=true) and resolve to public addresses only ' +
    '(unless WEBHOOK_ALLOW_PRIVATE=true); checked again at every delivery.',
  example: 'https://203.0.113.10/hooks/modules',
};

export const descriptionProperty: ApiPropertyOptions = {
  type: 'string',
  nullable: true,
  maxLength: DESCRIPTION_MAX,
  description: 'Free text for the administrators; counted in Unicode code points.',
  example: 'LMS course sync',
};

export class CreateWebhookDto {
  @ApiProperty(urlProperty)
  @IsWebhookUrl()
  url!: string;

  @ApiProperty(typesProperty)
  @IsWebhookTypes()
  types!: string[];

  @ApiPropertyOptional(descriptionProperty)
  @IsOptional()
  @IsWebhookDescription()
  description?: string | null;
}
