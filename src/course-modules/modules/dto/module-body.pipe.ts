import { Inject, Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { type AppConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { NOT_A_JSON_OBJECT_MESSAGE, ValidationFailed } from '../../../core/errors.js';
import { VALIDATOR_OPTIONS, validationMessages } from '../../../core/validation.js';
import { CODE_MAX, CODE_MESSAGE, codePoints } from '../module-rules.js';
import { ModuleBodyDto } from './module-body.dto.js';

/**
 * Validates a create / edit body like the global pipe does, plus `code` against MODULE_CODE_PATTERN from config.
 * Used as `@Body(ModuleBodyPipe) body: ModuleInput`: the parameter's type is an interface, so the global pipe
 * leaves the body to this one and every message, the code rule's included, is joined in field order.
 */
@Injectable()
export class ModuleBodyPipe implements PipeTransform<unknown, Promise<ModuleBodyDto>> {
  private readonly codePattern: RegExp;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.codePattern = new RegExp(config.moduleCodePattern, 'u');
  }

  isValidCode(code: string): boolean {
    return codePoints(code) <= CODE_MAX && this.codePattern.test(code);
  }

  async transform(value: unknown): Promise<ModuleBodyDto> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ValidationFailed(NOT_A_JSON_OBJECT_MESSAGE);
    }
    const body = plainToInstance(ModuleBodyDto, value);
    const errors = await validate(body, VALIDATOR_OPTIONS);
    const messages = validationMessages(errors);
    // `code` is the first field, so its message leads; IsString has already reported a non-string.
    if (typeof body.code === 'string' && !this.isValidCode(body.code)) messages.unshift(CODE_MESSAGE);
    if (messages.length > 0) throw new ValidationFailed(messages.join('; '));
    return body;
  }
}
