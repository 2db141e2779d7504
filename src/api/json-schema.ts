import { z } from 'zod';

/**
 * Turns a zod schema into a structural OpenAPI v3 schema that a CRD accepts.
 * z.toJSONSchema (target openapi-3.0, input side so that defaulted fields are
 * optional and carry `default`) comes close; what it lacks is fixed here:
 * - `{}` (unknown) and maps of unknown become `x-kubernetes-preserve-unknown-fields`;
 * - `additionalProperties: false` is dropped (the API server prunes unknown fields);
 * - the ±2^53 bounds zod puts on integers are dropped;
 * - `$ref`, `oneOf`, `anyOf`, `allOf` and `not` are refused: a structural schema
 *   cannot have them. Express "one of" as optional fields plus a CEL rule.
 */

export interface JSONSchemaProps {
  type?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  [key: string]: unknown;
}

const REFUSED = ['$ref', '$defs', 'definitions', 'oneOf', 'anyOf', 'allOf', 'not', 'const'] as const;

export function structuralSchema(schema: z.ZodType): JSONSchemaProps {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' });
  return toStructural(json as JSONSchemaProps, '');
}

function toStructural(node: JSONSchemaProps, path: string): JSONSchemaProps {
  const refused = REFUSED.find((key) => key in node);
  if (refused) throw new Error(`${path || '<root>'}: '${refused}' cannot be expressed in a CRD schema`);
  if (Object.keys(node).every((k) => k === 'description' || k === 'default')) {
    return { ...node, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: JSONSchemaProps = { ...node };
  delete out.$schema;
  if (out.type === 'integer') dropSafeIntegerBounds(out);
  if (out.properties) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([k, v]) => [k, toStructural(v, `${path}.${k}`)]),
    );
  }
  if (out.items) out.items = toStructural(out.items, `${path}[]`);
  if (out.additionalProperties === false) delete out.additionalProperties;
  else if (typeof out.additionalProperties === 'object') {
    const values = toStructural(out.additionalProperties, `${path}{}`);
    if (values['x-kubernetes-preserve-unknown-fields'] === true && values.type === undefined) {
      delete out.additionalProperties;
      out['x-kubernetes-preserve-unknown-fields'] = true;
    } else {
      out.additionalProperties = values;
    }
  }
  return out;
}

function dropSafeIntegerBounds(node: JSONSchemaProps): void {
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
}
