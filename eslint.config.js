// Lint: the rules the compiler cannot give. A floating or misused promise is a write nobody
// awaits (an event that may be lost without an error); type-only imports keep module loading
// lazy and honest. Run by `npm test` (and `npm run lint`).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.cache/**', 'src/report/assets/**', 'scripts/otlp-receiver/**', 'coverage/**', '.scratch/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
    },
  },
);
