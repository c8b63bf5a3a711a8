/**
 * A JSON answer as a test reads it: fields are read without a declared shape, because the
 * assertions on them are the check (test/helpers/openapi-check.ts holds live answers to
 * docs/openapi.yaml). The tests' one unchecked type.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type JsonAnswer = any;
