// The linter (npm test runs it as its own step, see scripts/run-tests.mjs): a small rule
// set that holds what the compiler does not, type-aware where the rule needs types.
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'conformance/vectors/**', 'examples/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      // The project service reads each file's nearest tsconfig (root or workspace package).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin, 'import-x': importX },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'import-x/first': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      // node:test's test() and describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] }],
      // Cheap catches of real bugs: a promise where a condition or a void callback is meant
      // (an async handler whose rejection nobody sees), comparisons that are always true or
      // false, assignments in conditions. (await-thenable is not here: its Promise.all check
      // refuses lists that mix ready values and promises, a form the code uses on purpose.)
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-duplicate-type-constituents': 'error',
      'no-self-compare': 'error',
      'no-self-assign': 'error',
      'no-constant-binary-expression': 'error',
      'no-unsafe-finally': 'error',
      'no-cond-assign': 'error',
      'use-isnan': 'error',
      'no-sparse-arrays': 'error',
      'no-loss-of-precision': 'error',
      'no-debugger': 'error',
    },
  },
);
