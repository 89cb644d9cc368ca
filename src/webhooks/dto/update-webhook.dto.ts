import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, ValidateIf } from 'class-validator';
import {
  ENABLED_MESSAGE,
  IsWebhookDescription,
  IsWebhookTypes,
  IsWebhookUrl,
} from '../webhook-body-rules.js';
import { descriptionProperty, typesProperty, urlProperty } from './create-webhook.dto.js';

/** Any of the four fields; an omitted field is left as it is. Only `description` may be null. */
export class UpdateWebhookDto {
  @ApiPropertyOptional(urlProperty)
  @ValidateIf((dto: UpdateWebhookDto) => dto.url !== undefined)
  @IsWebhookUrl()
  url?: string;

  @ApiPropertyOptional(typesProperty)
  @ValidateIf((dto: UpdateWebhookDto) => dto.types !== undefined)
  @IsWebhookTypes()
  types?: string[];

  @ApiPropertyOptional(descriptionProperty)
  @ValidateIf((dto: UpdateWebhookDto) => dto.description !== undefined)
  @IsWebhookDescription()
  description?: string | null;

  @ApiPropertyOptional({
    type: 'boolean',
    description: 'Turning a webhook on again clears `failing_since`; a disabled webhook gets no events.',
    example: true,
  })
  @ValidateIf((dto: UpdateWebhookDto) => dto.enabled !== undefined)
  @IsBoolean({ message: ENABLED_MESSAGE })
  enabled?: boolean;
}
