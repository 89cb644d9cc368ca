import { Injectable, type PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate, ValidationError } from 'class-validator';
import { NOT_A_JSON_OBJECT_MESSAGE, ValidationFailed } from '../../../core/errors.js';
import { VALIDATOR_OPTIONS, validationMessages } from '../../../core/validation.js';
import { parseModuleRole } from '../../modules/module-role.js';
import { DEFAULT_ROLLOVER_ROLES } from '../rollover.js';
import { ModuleBodyPipe } from '../../modules/dto/module-body.pipe.js';
import { CODES_MESSAGE, RolloverBodyDto, type RolloverInput } from './rollover-body.dto.js';

/** Body fields in the order their messages are joined. */
const FIELDS = ['from_year', 'to_year', 'codes', 'roles'];

/**
 * Validates a rollover body like the global pipe does, plus each of `codes` against the code rule of module create
 * (MODULE_CODE_PATTERN, from config), and hands the service canonical, distinct roles.
 */
@Injectable()
export class RolloverBodyPipe implements PipeTransform<unknown, Promise<RolloverInput>> {
  constructor(private readonly moduleBody: ModuleBodyPipe) {}

  async transform(value: unknown): Promise<RolloverInput> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ValidationFailed(NOT_A_JSON_OBJECT_MESSAGE);
    }
    const body = plainToInstance(RolloverBodyDto, value);
    const errors = await validate(body, VALIDATOR_OPTIONS);
    const codes = body.codes ?? undefined;
    if (
      codes !== undefined &&
      !errors.some((error) => error.property === 'codes') &&
      !codes.every((code) => this.moduleBody.isValidCode(code))
    ) {
      const error = new ValidationError();
      error.property = 'codes';
      error.constraints = { isModuleCodes: CODES_MESSAGE };
      errors.push(error);
    }
    const rank = (error: ValidationError) => {
      const index = FIELDS.indexOf(error.property);
      return index === -1 ? FIELDS.length : index;
    };
    const messages = validationMessages(errors.sort((a, b) => rank(a) - rank(b)));
    if (messages.length > 0) throw new ValidationFailed(messages.join('; '));
    const roles = body.roles ?? DEFAULT_ROLLOVER_ROLES;
    return {
      fromYear: body.from_year,
      toYear: body.to_year,
      codes,
      roles: [...new Set(roles.map((role) => parseModuleRole(role)!))],
    };
  }
}
