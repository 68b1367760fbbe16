/**
 * The error catalogue against the source and over HTTP: every problem code the
 * source can emit (read from the `new ApiError(...)` and `new CommandRejected(...)`
 * calls in api/ and core/commands/) has an entry with the same status, no entry
 * is left over, docs/errors.md is the catalogue's current rendering, and a
 * problem's `type`, resolved against the request's URL on a real server,
 * answers 200 with the code's anchor.
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ERROR_DOCS_PATH, catalogueEntry, renderErrorsMarkdown } from '../../api/error-catalogue.js';
import { REJECTION_STATUS, problemType } from '../../api/problem.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE_DIRS = ['api', 'core/commands'];

/** How a command's refusal kind maps to a status. */
const KIND_STATUS: Record<string, number> = REJECTION_STATUS;

interface Emitted {
  code: string;
  /** Null when the source does not fix it (e.g. `err.statusCode ?? 400`). */
  status: number | null;
  where: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The top-level arguments of the call whose `(` is at `open`, as source text (strings and templates skipped over). */
function callArguments(src: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < src.length; i++) {
    const c = src[i]!;
    if (c === "'" || c === '"') {
      i = src.indexOf(c, i + 1);
    } else if (c === '`') {
      // Skip a template literal, including `${...}` expressions (which may hold quotes).
      let braces = 0;
      for (i++; i < src.length; i++) {
        if (src[i] === '\\') i++;
        else if (src[i] === '$' && src[i + 1] === '{') {
          braces++;
          i++;
        }
        else if (src[i] === '}' && braces > 0) braces--;
        else if (src[i] === '`' && braces === 0) break;
      }
    } else if ('([{'.includes(c)) {
      depth++;
    } else if (')]}'.includes(c)) {
      depth--;
      if (depth === 0) {
        args.push(src.slice(start, i).trim());
        return args;
      }
    } else if (c === ',' && depth === 1) {
      args.push(src.slice(start, i).trim());
      start = i + 1;
    }
  }
  throw new Error('unterminated call');
}

const literals = (text: string) => [...text.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);

/** The codes a code argument can take: its string literals, or a `${name}_suffix` template whose `name` is a const of literals. */
function codesOf(arg: string, file: string): string[] {
  const template = /^`\$\{(\w+)\}(_[a-z_]+)`$/.exec(arg);
  if (template) {
    const decl = new RegExp(`const ${template[1]} = ([^;]+);`).exec(readFileSync(file, 'utf8'));
    return decl ? literals(decl[1]!).map((prefix) => prefix + template[2]) : [];
  }
  return literals(arg);
}

function emittedCodes(): Emitted[] {
  const out: Emitted[] = [];
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const src = readFileSync(file, 'utf8');
    const where = file.slice(ROOT.length);
    for (const m of src.matchAll(/new (ApiError|CommandRejected)\(/g)) {
      const [first = '', second = ''] = callArguments(src, m.index + m[0].length - 1);
      // rejectionProblem passes a command's code through: those codes are read from the CommandRejected calls.
      if (second === 'rejection.code') continue;
      // The class declarations themselves (`class ApiError`) do not match `new`; a call must name a code we can read.
      const codes = codesOf(second, file);
      if (codes.length === 0) throw new Error(`${where}: cannot read the code of ${m[0]}${first}, ${second}`);
      const status = m[1] === 'CommandRejected' ? (KIND_STATUS[literals(first)[0] ?? ''] ?? null) : /^\d{3}$/.test(first) ? Number(first) : null;
      for (const code of codes) out.push({ code, status, where });
    }
    // Refusals written as [status, code, detail] tuples (the HTTP parser's errors in api/plugins/errors.ts).
    for (const t of src.matchAll(/\[(\d{3}), '([a-z_]+)'/g)) out.push({ code: t[2]!, status: Number(t[1]), where });
  }
  return out;
}

describe('the error catalogue', () => {
  const emitted = emittedCodes();

  it('finds the codes in the source (the scan itself works)', () => {
    const codes = new Set(emitted.map((e) => e.code));
    for (const known of ['validation_failed', 'not_found', 'rate_limited', 'cursor_mismatch', 'imei_taken', 'terminal_taken', 'headers_too_large']) {
      expect(codes).toContain(known);
    }
  });

  it('has an entry for every code the source emits, with the status the source gives it', () => {
    const missing = emitted.filter((e) => !catalogueEntry(e.code)).map((e) => `${e.code} (${e.where})`);
    expect(missing).toEqual([]);
    const wrongStatus = emitted
      .filter((e) => e.status !== null && catalogueEntry(e.code)!.status !== e.status)
      .map((e) => `${e.code}: ${e.status} in ${e.where}, ${catalogueEntry(e.code)!.status} in the catalogue`);
    expect(wrongStatus).toEqual([]);
  });

  it('has no entry for a code nothing emits, and one entry per code', () => {
    const codes = new Set(emitted.map((e) => e.code));
    expect(ERROR_CATALOGUE.filter((e) => !codes.has(e.code)).map((e) => e.code)).toEqual([]);
    expect(new Set(ERROR_CATALOGUE.map((e) => e.code)).size).toBe(ERROR_CATALOGUE.length);
  });

  it('is what docs/errors.md says (regenerate it with npm run docs:errors)', () => {
    expect(readFileSync(join(ROOT, 'docs/errors.md'), 'utf8')).toBe(renderErrorsMarkdown());
  });

  it('gives every code a heading, so #<code> anchors work in docs/errors.md too', () => {
    const md = renderErrorsMarkdown();
    for (const e of ERROR_CATALOGUE) expect(md).toContain(`\n## ${e.code}\n`);
  });
});

describe('problem type URIs', () => {
  it('point at the catalogue entry, keeping the public URL path behind a proxy', () => {
    expect(problemType('rate_limited')).toBe(`${ERROR_DOCS_PATH}#rate_limited`);
    expect(problemType('rate_limited', '/fleet')).toBe('/fleet/docs/errors#rate_limited');
  });

  describe('on a real server', () => {
    let h: ApiHarness;
    let base: string;
    beforeAll(async () => {
      h = await startApiHarness();
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await h.close();
    });

    it.each([
      ['/v1/devices', 'unauthenticated', 401],
      ['/v1/no-such-thing', 'route_not_found', 404],
    ])('GET %s: the problem type resolves to a page with the %s anchor, without credentials', async (path, code, status) => {
      const res = await fetch(base + path);
      expect(res.status).toBe(status);
      const problem = (await res.json()) as { type: string; code: string };
      expect(problem.code).toBe(code);
      const url = new URL(problem.type, res.url);
      expect(url.hash).toBe(`#${code}`);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain(`id="${code}"`);
    });

    it('serves an anchor for every code, and swagger-ui still owns /docs', async () => {
      const html = await (await fetch(`${base}${ERROR_DOCS_PATH}`)).text();
      for (const e of ERROR_CATALOGUE) expect(html).toContain(`<section id="${e.code}">`);
      const ui = await fetch(`${base}/docs/`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toContain('swagger');
    });
  });

  it('keeps the public URL path in the type of a live answer', async () => {
    const h = await startApiHarness({ settings: { publicUrl: 'https://api.example.org/fleet/' } });
    try {
      const res = await h.app.inject({ method: 'GET', url: '/v1/devices' });
      expect(res.json()).toMatchObject({ code: 'unauthenticated', type: '/fleet/docs/errors#unauthenticated' });
    } finally {
      await h.close();
    }
  });
});
