import { Injectable, type PipeTransform } from '@nestjs/common';
import { ValidationFailed } from './errors.js';
import { INT64_MAX } from './ids.js';

/**
 * A path id: a positive integer within 64 bits, else 400 `<param> must be a positive integer`.
 * It is returned as its exact decimal string, which PostgreSQL compares with `bigint` without rounding.
 */
@Injectable()
export class IdPipe implements PipeTransform<string, string> {
  constructor(private readonly param: string) {}

  transform(value: string): string {
    if (/^\d+$/.test(value)) {
      const id = BigInt(value);
      if (id >= 1n && id <= INT64_MAX) return id.toString();
    }
    throw new ValidationFailed(`${this.param} must be a positive integer`);
  }
}
