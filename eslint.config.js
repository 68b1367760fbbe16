// Lint: typescript-eslint's recommended rules over every TypeScript source, and the import rules of the
// architecture: core/ depends on nothing of ours; gateway/, projections/ and webhook-delivery/ on core/ only
// (delivery's composition, from-config.ts, also on the projector's feed); api/ on core/, projections/ (read
// models) and the types of webhook-delivery/index.ts; cli/ (the `fleet` command line) on core/ only; main.ts is
// the composition root and test/ may import anything; panel/ (the browser UI) imports none of them.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// One pattern per forbidden top-level module. Imports are relative, so a path that climbs out (`../`, any
// depth) and then enters the folder is an import of it; `./x` stays inside the importer's own folder.
const forbid = (importer, folders) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})(/|\\.js$|$)`,
  message: `${importer}/ may not import ${folders.map((f) => (f === 'main' ? 'main.ts' : `${f}/`)).join(', ')}: the architecture's import rules (eslint.config.js).`,
});

const boundary = (importer, folders, ignores = []) => ({
  files: [`${importer}/**/*.ts`],
  ignores,
  rules: { 'no-restricted-imports': ['error', { patterns: [forbid(importer, folders)] }] },
});

// Delivery's composition: the thread entry and the in-process start build the service with the projector's feed.
const deliveryComposition = 'webhook-delivery/from-config.ts';

// core/sqlite-limit.ts says why: a bare bound LIMIT makes SQLite re-prepare the statement on every run.
const boundLimit = ['Literal[value=/LIMIT\\s+[?@:$]/i]', 'TemplateElement[value.raw=/LIMIT\\s+[?@:$]/i]'].map((selector) => ({
  selector,
  message: 'Bind a LIMIT through boundLimit() (core/sqlite-limit.ts): SQLite re-prepares a statement with a bare bound LIMIT on every run.',
}));

// The panel shows customer-set text (names, URLs, device fields) as text only: no HTML sink but through
// panel/src/safe-text.ts (a pen test found a geofence name parsed as markup in a Leaflet tooltip).
const safeText = 'panel/src/safe-text.ts';
const fromSafeText = '/^(textElement|templateElement)$/';
const textOnly = [
  ["AssignmentExpression > MemberExpression.left[property.name=/^(innerHTML|outerHTML)$/]", 'innerHTML/outerHTML parse markup'],
  ['CallExpression[callee.property.name=/^(insertAdjacentHTML|createContextualFragment|parseFromString)$/]', 'this parses markup'],
  ["CallExpression[callee.object.name='document'][callee.property.name=/^(write|writeln)$/]", 'document.write parses markup'],
  ['ImportDeclaration[source.value=/unsafe-(html|svg)/]', 'unsafeHTML/unsafeSVG insert markup'],
  [
    `CallExpression[callee.property.name=/^(bindTooltip|bindPopup|setContent|setTooltipContent|setPopupContent)$/]:not([arguments.0.callee.name=${fromSafeText}]):not([arguments.0.body.callee.name=${fromSafeText}])`,
    "Leaflet parses a string tooltip or popup as HTML: pass textElement(...) or templateElement(...), or a function returning one",
  ],
  ["CallExpression[callee.property.name=/^(tooltip|popup)$/] Property[key.name='content']:not([value.callee.name=" + fromSafeText + '])', 'Leaflet parses string content as HTML'],
  ["CallExpression[callee.property.name='divIcon'] Property[key.name='html'][value.type!='Literal']", "a divIcon's html is parsed as markup: keep it a fixed literal"],
].map(([selector, why]) => ({ selector, message: `${why}; customer-set text reaches the page through ${safeText} only.` }));

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
  // SQLite's rule: PostgreSQL binds a LIMIT without planning the statement again.
  { files: ['**/*.ts'], ignores: ['**/postgres.ts'], rules: { 'no-restricted-syntax': ['error', ...boundLimit] } },
  // One rule's options replace an earlier block's, so the panel's block repeats the LIMIT one.
  { files: ['panel/src/**/*.ts'], ignores: [safeText], rules: { 'no-restricted-syntax': ['error', ...boundLimit, ...textOnly] } },
  boundary('core', ['gateway', 'projections', 'webhook-delivery', 'api', 'cli', 'main']),
  boundary('gateway', ['projections', 'webhook-delivery', 'api', 'cli', 'main']),
  boundary('projections', ['gateway', 'webhook-delivery', 'api', 'cli', 'main']),
  // Webhook delivery is a service of its own: the projector hands it deliveries through core/webhook-queue.ts.
  boundary('webhook-delivery', ['gateway', 'projections', 'api', 'cli', 'main'], [deliveryComposition]),
  {
    files: [deliveryComposition],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            forbid('webhook-delivery', ['gateway', 'api', 'cli', 'main']),
            { regex: '^(\\.\\./)+projections/(?!webhooks/feed\\.js$)', message: `${deliveryComposition} may not import projections/ but its feed (projections/webhooks/feed.ts): the architecture's import rules (eslint.config.js).` },
          ],
        },
      ],
    },
  },
  boundary('api', ['gateway', 'cli', 'main']),
  // The API reads delivery through the access interface main.ts hands it (api/context.ts): types only.
  {
    files: ['api/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+webhook-delivery/(?!index\\.js$)', message: "api/ may not import webhook-delivery/ but the types of its index.ts: the architecture's import rules (eslint.config.js)." },
            { regex: '^(\\.\\./)+webhook-delivery/index\\.js$', allowTypeImports: true, message: "api/ may not import webhook-delivery/ but the types of its index.ts: the architecture's import rules (eslint.config.js)." },
          ],
        },
      ],
    },
  },
  // The command line runs core commands on the store; starting the platform is handed in by main.ts.
  boundary('cli', ['gateway', 'projections', 'webhook-delivery', 'api', 'main']),
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
