import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A string of `min..max` Unicode code points (class-validator's `Length` counts UTF-16 units). */
export function CodePointLength(min: number, max: number, options: ValidationOptions) {
  return ValidateBy(
    {
      name: 'codePointLength',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = [...value].length;
          return length >= min && length <= max;
        },
      },
    },
    options,
  );
}
