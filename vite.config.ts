import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: 'renderer',
  // Relative asset URLs: the same build loads from file:// in Electron and from the browser host.
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    target: 'chrome120',
    // One bundle loaded from disk or 127.0.0.1, never over a slow network; the phone-number
    // metadata alone is a few hundred kB.
    chunkSizeWarningLimit: 1024,
  },
});
