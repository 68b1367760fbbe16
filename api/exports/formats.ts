/**
 * Text of the export formats: CSV (RFC 4180: a header line, CRLF, fields
 * quoted when they hold a comma, quote or line break), GPX 1.1 tracks and
 * KML 2.2 line strings. Pure, a line or a document's ends at a time.
 */

export type CsvValue = string | number | boolean | null | undefined;

function csvField(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  const text = String(v);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly CsvValue[]): string {
  return values.map(csvField).join(',') + '\r\n';
}

/** Rows as CSV lines under `columns` (the header, written first by the caller with csvLine). */
export function csvRows<T>(rows: readonly T[], columns: ReadonlyArray<(row: T) => CsvValue>): string {
  let out = '';
  for (const row of rows) out += csvLine(columns.map((c) => c(row)));
  return out;
}

/** A CSV file from a walk of row pages: the header line, then a chunk per page. */
export async function* csvChunks<T>(columns: ReadonlyArray<readonly [string, (row: T) => CsvValue]>, walk: AsyncIterable<T[]>): AsyncGenerator<string> {
  yield csvLine(columns.map(([name]) => name));
  const values = columns.map(([, value]) => value);
  for await (const rows of walk) yield csvRows(rows, values);
}

export function xmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export interface TrackPoint {
  lat: number;
  lng: number;
  altitude_m: number | null;
  timestamp: string;
  speed_kmh: number | null;
}

export function gpxStart(name: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<gpx version="1.1" creator="fleet" xmlns="http://www.topografix.com/GPX/1/1">\n' +
    `<trk><name>${xmlText(name)}</name><trkseg>\n`
  );
}

export function gpxPoint(p: TrackPoint): string {
  const ele = p.altitude_m === null ? '' : `<ele>${p.altitude_m}</ele>`;
  return `<trkpt lat="${p.lat}" lon="${p.lng}">${ele}<time>${p.timestamp}</time></trkpt>\n`;
}

export const GPX_END = '</trkseg></trk>\n</gpx>\n';

export function kmlStart(name: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<kml xmlns="http://www.opengis.net/kml/2.2"><Document>\n' +
    `<name>${xmlText(name)}</name><Placemark><name>${xmlText(name)}</name><LineString><tessellate>1</tessellate><coordinates>\n`
  );
}

/** KML orders a coordinate longitude first. */
export function kmlPoint(p: TrackPoint): string {
  return p.altitude_m === null ? `${p.lng},${p.lat}\n` : `${p.lng},${p.lat},${p.altitude_m}\n`;
}

export const KML_END = '</coordinates></LineString></Placemark>\n</Document></kml>\n';
