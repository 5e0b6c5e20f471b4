// Flat config: typescript-eslint's type-aware rules over everything we write.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/results/**', 'homebridge-ui/public/vendor/**', 'homebridge-ui/server.js', 'test-artifacts/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js', '*.mjs', 'scripts/*.mjs', 'homebridge-ui/public/js/*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The settings page's browser modules: the browser globals they use (tsc checks them against lib dom).
    files: ['homebridge-ui/public/js/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(['window', 'document', 'localStorage', 'setTimeout', 'clearTimeout', 'structuredClone', 'CSS', 'HTMLButtonElement', 'HTMLSelectElement', 'Event', 'Node', 'URL', 'Blob', 'fetch', 'navigator', 'Intl'].map((name) => [name, 'readonly'])),
    },
  },
);
