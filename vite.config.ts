// The customer panel's build: panel/ (index.html and its TypeScript modules) -> dist/panel/, served by api/panel.ts.
// Everything the page needs is bundled (Leaflet, the world outline, charts): the CSP allows this origin only.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('./panel/', import.meta.url)),
  base: '/',
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./dist/panel/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // Leaflet inlines nothing from the network; small images (marker icons, layer icons) become data: URLs.
    assetsInlineLimit: 8192,
    chunkSizeWarningLimit: 1200,
  },
  server: {
    // `npm run panel:dev`: the API on :3000 (npm start) answers /v1 and the config; Vite serves the modules.
    proxy: { '/v1': 'http://127.0.0.1:3000', '/panel-config.json': 'http://127.0.0.1:3000' },
  },
});
