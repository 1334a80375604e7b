/** Validates values against the published svc.search.v1 JSON Schema with ajv (draft 2020-12, formats on). */
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { svcSearchV1Schema } from '../../server/modules/search/search.output.ts';

export const ajv = new Ajv2020({ strict: true, allErrors: true });
// ajv-formats is CommonJS: TypeScript types the default import as the module, whose `default` is the plugin.
formatsPlugin.default(ajv);

const validate = ajv.compile(svcSearchV1Schema);

/** Throws with ajv's reasons when `value` is not a valid svc.search.v1 object. */
export function assertSvcSearchV1(value: unknown): void {
  if (!validate(value)) throw new Error(`not svc.search.v1: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value, null, 2)}`);
}
