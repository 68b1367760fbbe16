/**
 * A device's position history as a file: CSV, GPX 1.1 (one track) or KML 2.2
 * (one line string), read a page of 1,000 fixes at a time from the history
 * pages' thread and written as the client takes them (stream.ts).
 */
import type { HistoryPage } from '../queries/positions.js';
import type { Static } from '@sinclair/typebox';
import type { HistoryPosition } from '../schemas/positions.js';
import { csvLine, csvRows, GPX_END, gpxPoint, gpxStart, KML_END, kmlPoint, kmlStart, type CsvValue } from './formats.js';
import type { ExportFile } from './stream.js';

export type PositionFormat = 'csv' | 'gpx' | 'kml';
type Item = Static<typeof HistoryPosition>;

/** Fixes one page of an export reads. */
export const EXPORT_PAGE = 1000;

const COLUMNS: Array<[string, (p: Item) => CsvValue]> = [
  ['device_id', (p) => p.device_id],
  ['timestamp', (p) => p.timestamp],
  ['lat', (p) => p.lat],
  ['lng', (p) => p.lng],
  ['speed_kmh', (p) => p.speed_kmh],
  ['heading_deg', (p) => p.heading_deg],
  ['altitude_m', (p) => p.altitude_m],
  ['satellites', (p) => p.satellites],
  ['ignition', (p) => p.ignition],
  ['valid', (p) => p.valid],
  ['odometer_km', (p) => p.odometer_km],
  ['received_at', (p) => p.received_at],
];

export function positionExportFile(format: PositionFormat, deviceId: string, from: number): ExportFile {
  const day = new Date(from).toISOString().slice(0, 10);
  const contentType = { csv: 'text/csv; charset=utf-8', gpx: 'application/gpx+xml', kml: 'application/vnd.google-earth.kml+xml' }[format];
  return { contentType, filename: `positions-${deviceId}-${day}.${format}` };
}

/** The file's text, page after page; `first` is the page already read (the route reads it to answer a 404 before any byte). */
export async function* positionExport(
  format: PositionFormat,
  name: string,
  first: HistoryPage,
  read: (after: NonNullable<HistoryPage['next']>) => Promise<HistoryPage>,
): AsyncGenerator<string> {
  const values = COLUMNS.map(([, value]) => value);
  yield format === 'csv' ? csvLine(COLUMNS.map(([column]) => column)) : format === 'gpx' ? gpxStart(name) : kmlStart(name);
  let page: HistoryPage | null = first;
  while (page) {
    if (page.items) {
      const items = JSON.parse(`[${page.items.toString('utf8')}]`) as Item[];
      if (format === 'csv') yield csvRows(items, values);
      else yield items.map(format === 'gpx' ? gpxPoint : kmlPoint).join('');
    }
    page = page.next ? await read(page.next) : null;
  }
  if (format !== 'csv') yield format === 'gpx' ? GPX_END : KML_END;
}
