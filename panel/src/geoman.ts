/** Leaflet-Geoman (drawing tools) expects a global `L`: set it before the plugin's module runs (imports run in order). */
import './leaflet-global';
import '@geoman-io/leaflet-geoman-free';
import '@geoman-io/leaflet-geoman-free/dist/leaflet-geoman.css';
