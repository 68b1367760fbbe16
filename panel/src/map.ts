/**
 * The base map of every page that has one: Leaflet with the bundled world
 * outline (Natural Earth countries from world-atlas, turned into GeoJSON by
 * topojson-client; no network needed), and the tile layer of
 * /panel-config.json over it when the server configures one.
 */
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import countries from 'world-atlas/countries-110m.json';
import { get } from './api';

export interface PanelConfig {
  tile_url: string | null;
  tile_attribution: string | null;
}

let config: Promise<PanelConfig> | null = null;

export function panelConfig(): Promise<PanelConfig> {
  config ??= get<PanelConfig>('/panel-config.json').catch(() => ({ tile_url: null, tile_attribution: null }));
  return config;
}

let outline: GeoJSON.FeatureCollection | null = null;

/**
 * Rings that cross the antimeridian (Russia, Fiji) jump from 180 to -180 in
 * the data; drawn as they are, each jump is a line across the whole world.
 * Continuing the longitudes past ±180 keeps each ring in one piece.
 */
function unwrapRing(ring: GeoJSON.Position[]): GeoJSON.Position[] {
  let shift = 0;
  return ring.map((p, i) => {
    const prev = ring[i - 1];
    if (prev) {
      const jump = p[0]! - prev[0]!;
      if (jump > 180) shift -= 360;
      else if (jump < -180) shift += 360;
    }
    return [p[0]! + shift, p[1]!];
  });
}

function worldOutline(): GeoJSON.FeatureCollection {
  if (!outline) {
    const topology = countries as unknown as Topology<{ countries: GeometryCollection }>;
    const collection = feature(topology, topology.objects.countries) as GeoJSON.FeatureCollection;
    for (const f of collection.features) {
      const g = f.geometry;
      if (g.type === 'Polygon') g.coordinates = g.coordinates.map(unwrapRing);
      else if (g.type === 'MultiPolygon') g.coordinates = g.coordinates.map((poly) => poly.map(unwrapRing));
    }
    outline = collection;
  }
  return outline;
}

/**
 * How far a page may zoom in on its own (fitting devices or a track): with
 * tiles, to street level; with only the world outline, to where countries
 * still show (closer in there is nothing to see).
 */
export let autoZoom = 5;

export async function createMap(el: HTMLElement, label: string): Promise<L.Map> {
  const map = L.map(el, { worldCopyJump: true, minZoom: 1, zoomSnap: 0.5 }).setView([30, 10], 2);
  el.setAttribute('role', 'region');
  el.setAttribute('aria-label', label);
  // The outline lies under the tile pane (z-index 200): tiles, when configured and reachable, cover it; offline it shows.
  map.createPane('outline').style.zIndex = '150';
  L.geoJSON(worldOutline(), {
    pane: 'outline',
    interactive: false,
    style: { color: '#7a8796', weight: 0.8, fillColor: '#e9eef3', fillOpacity: 1 },
  }).addTo(map);
  map.attributionControl.setPrefix('Leaflet | outline: Natural Earth');
  const { tile_url, tile_attribution } = await panelConfig();
  if (tile_url) L.tileLayer(tile_url, { attribution: tile_attribution ?? '', maxZoom: 19 }).addTo(map);
  autoZoom = tile_url ? 15 : 5;
  return map;
}

export type DeviceStatus = 'online' | 'offline' | 'never_connected';

/** A device's marker: a small labelled dot (a div icon, no image), keyboard-focusable, its position in data attributes. */
export function deviceMarker(id: string, name: string, lat: number, lng: number, status: DeviceStatus): L.Marker {
  const marker = L.marker([lat, lng], {
    icon: L.divIcon({ className: `device-marker status-${status}`, html: '<span></span>', iconSize: [18, 18] }),
    title: name,
    alt: name,
    keyboard: true,
    riseOnHover: true,
  });
  marker.on('add', () => markAt(marker, id, lat, lng));
  return marker;
}

export function markAt(marker: L.Marker, id: string, lat: number, lng: number): void {
  const el = marker.getElement();
  if (!el) return;
  el.dataset.deviceId = id;
  el.dataset.lat = String(lat);
  el.dataset.lng = String(lng);
}

export function moveMarker(marker: L.Marker, id: string, lat: number, lng: number): void {
  marker.setLatLng([lat, lng]);
  markAt(marker, id, lat, lng);
}

export { L };
