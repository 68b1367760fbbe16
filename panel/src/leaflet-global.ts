import L from 'leaflet';

(window as unknown as { L: typeof L }).L = L;
