// Lint: typescript-eslint's recommended rules over every TypeScript source, and the import rules of the
// architecture: core/ depends on nothing of ours; gateway/ and projections/ on core/ only; api/ on core/ and
// projections/ (read models); main.ts is the composition root and test/ may import anything; panel/ (the browser
// UI) imports none of them.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// One pattern per forbidden top-level module. Imports are relative, so a path that climbs out (`../`, any
// depth) and then enters the folder is an import of it; `./x` stays inside the importer's own folder.
const forbid = (importer, folders) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})(/|\\.js$|$)`,
  message: `${importer}/ may not import ${folders.map((f) => (f === 'main' ? 'main.ts' : `${f}/`)).join(', ')}: the architecture's import rules (eslint.config.js).`,
});

const boundary = (importer, folders) => ({
  files: [`${importer}/**/*.ts`],
  rules: { 'no-restricted-imports': ['error', { patterns: [forbid(importer, folders)] }] },
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', Buffer: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setImmediate: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', performance: 'readonly', fetch: 'readonly', URL: 'readonly', crypto: 'readonly', AbortSignal: 'readonly', AbortController: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // core/sqlite-limit.ts says why: a bare bound LIMIT makes SQLite re-prepare the statement on every run.
    files: ['**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Literal[value=/LIMIT\\s+[?@:$]/i]', 'TemplateElement[value.raw=/LIMIT\\s+[?@:$]/i]'].map((selector) => ({
          selector,
          message: 'Bind a LIMIT through boundLimit() (core/sqlite-limit.ts): SQLite re-prepares a statement with a bare bound LIMIT on every run.',
        })),
      ],
    },
  },
  boundary('core', ['gateway', 'projections', 'api', 'main']),
  boundary('gateway', ['projections', 'api', 'main']),
  boundary('projections', ['gateway', 'api', 'main']),
  boundary('api', ['gateway', 'main']),
  // The customer panel runs in the browser and talks to the server through the public API only: its modules
  // import each other (panel/src) and npm packages, never the server's code.
  ...[
    // Except the API's vocabulary (event kinds, scopes): plain constants whose one home is core/.
    ['panel/src/*.ts', '^\\.\\./(?!\\.\\./core/(alarms|events)\\.js$)'],
    ['panel/src/pages/*.ts', '^\\.\\./\\.\\./'],
  ].map(([files, regex]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex, message: 'panel/ may import only panel/src and npm packages: the panel uses the public /v1 API, never server code (eslint.config.js).' }] }],
    },
  })),
);
