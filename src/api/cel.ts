import { z } from 'zod';

/**
 * CEL validation rules for the CRD schemas, attached to zod schemas with
 * `.meta(celRule(...))`; z.toJSONSchema copies them into the generated schema.
 */
export const CEL_KEY = 'x-kubernetes-validations';

export interface CelRule {
  rule: string;
  /** What a person reads when the rule fails: say what is expected. */
  message: string;
}

export function celRule(rule: string, message: string): { [CEL_KEY]: CelRule[] } {
  return { [CEL_KEY]: [{ rule, message }] };
}

/** A CEL expression that is true when exactly one of `fields` is set on `self`. */
export function exactlyOneOf(fields: readonly string[]): string {
  return `[${fields.map((f) => `has(self.${f})`).join(', ')}].exists_one(x, x)`;
}

/**
 * A string that must match `pattern` (RE2 and JavaScript alike: avoid
 * backslashes and quotes). The CRD checks it with a CEL rule instead of
 * `pattern`, because then the API server says `message` instead of printing the
 * regular expression.
 */
export function matchingString(pattern: string, message: string, maxLength: number): z.ZodString {
  if (/['\\]/.test(pattern)) throw new Error(`pattern ${pattern} must not contain quotes or backslashes`);
  const re = new RegExp(pattern);
  return z
    .string()
    .max(maxLength)
    .refine((s) => re.test(s), { message })
    .meta(celRule(`self.matches('${pattern}')`, message));
}
