import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsTokenExpiry, IsTokenName, IsTokenScopes, NAME_MAX, TOKEN_SCOPES } from '../token-rules.js';

export class CreateTokenDto {
  @ApiProperty({
    type: 'string',
    minLength: 1,
    maxLength: NAME_MAX,
    description: 'Who uses it, for the administrators (counted in Unicode code points).',
    example: 'Entra ID provisioning',
  })
  @IsTokenName()
  name!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...TOKEN_SCOPES] },
    minItems: 1,
    description:
      '`scim`: the SCIM routes (/api/scim/v2); `events`: `GET /api/events`; `exports`: the LMS roster exports ' +
      '(`GET /api/exports/…`). Nothing else.',
    example: ['scim'],
  })
  @IsTokenScopes()
  scopes!: string[];

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'A future instant after which the token is refused; null or absent: it never expires.',
    example: '2027-09-30T00:00:00.000Z',
  })
  @IsOptional()
  @IsTokenExpiry()
  expires_at?: string | null;
}
