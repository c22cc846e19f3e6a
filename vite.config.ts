import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: 'renderer',
  // Relative asset URLs: the same build loads from app://softphone/ in Electron and from the browser host.
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    target: 'chrome120',
    // The largest libraries in chunks of their own, so that no chunk passes Vite's default size
    // warning; each language but English is one too (renderer/i18n/i18n.ts loads it on demand).
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            { name: 'phone-numbers', test: /node_modules[\\/]libphonenumber-js[\\/]/ },
          ],
        },
      },
    },
    // Every asset a file of the page's own origin, never a data: URL: the CSP (renderer/index.html)
    // lets the page fetch and play only 'self', so an inlined `?url` asset could not be fetched.
    // Vite writes no inline <script> or <style> into index.html (CSS goes to a file, the
    // modulepreload polyfill into the bundle), so the policy needs no 'unsafe-inline'.
    assetsInlineLimit: 0,
  },
});
