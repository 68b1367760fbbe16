/**
 * Writes docs/errors.md from the error catalogue (api/error-catalogue.ts),
 * the one source of both the served page and the file:
 *   node dist/test/support/write-error-docs.js [docs/errors.md]
 */
import { writeFileSync } from 'node:fs';
import { renderErrorsMarkdown } from '../../api/error-catalogue.js';

const out = process.argv[2] ?? 'docs/errors.md';
writeFileSync(out, renderErrorsMarkdown());
process.stdout.write(`wrote ${out}\n`);
