import { loadConfig } from '../../src/config/app-config.js';
import { ValidationFailed } from '../../src/core/errors.js';
import { ModuleBodyPipe } from '../../src/course-modules/modules/dto/module-body.pipe.js';

/** The module body pipe with the default `MODULE_CODE_PATTERN`, or with `pattern`. */
export const moduleBodyPipe = (pattern?: string) =>
  new ModuleBodyPipe(loadConfig(pattern === undefined ? {} : { MODULE_CODE_PATTERN: pattern }));

/** The message of the 400 (`ValidationFailed`) that `promise` rejects with. */
export async function messageOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationFailed);
    return (error as ValidationFailed).message;
  }
  throw new Error('expected a 400');
}
