/**
 * Loads the conformance corpus, the repository's own (test/fixtures/conformance,
 * described in its README.md).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ConformanceFrame {
  protocol: 'teltonika' | 'gt06' | 'jt808';
  transport: 'tcp' | 'udp';
  hex: string;
  hex_unescaped?: string;
  escaping?: unknown;
  note?: string;
  expect?: {
    null?: boolean;
    attributes?: Record<string, unknown>;
    fields?: Record<string, number>;
    position?: { time?: string; valid?: boolean; lat?: number; lon?: number };
    frame_decoder_output?: string;
    [k: string]: unknown;
  };
  traccar_assert_helpers?: string[];
  sources?: Array<{ file: string; method: string; line: number; helper?: string; [k: string]: unknown }>;
  context?: { device_model?: string; teltonika_extended_16byte_io?: boolean; [k: string]: unknown };
  derived?: Record<string, unknown>;
  integrity_issues?: unknown;
}

export const FIXTURE_PATH = fileURLToPath(new URL('../fixtures/conformance/frames.json', import.meta.url));

let cache: ConformanceFrame[] | null = null;

export function loadFrames(protocol?: ConformanceFrame['protocol']): Array<ConformanceFrame & { index: number }> {
  cache ??= JSON.parse(readFileSync(FIXTURE_PATH, 'utf8')) as ConformanceFrame[];
  return cache
    .map((f, index) => ({ ...f, index }))
    .filter((f) => protocol === undefined || f.protocol === protocol);
}

/** Knots (Traccar's unit) to km/h (ours). */
export const KNOTS_TO_KMH = 1.852;
