// `npm start`: the Electron host when its runtime is installed, else the browser host (one line says so).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { main as runBrowserHost } from '../electron/browser/run-browser-host';

/** Looks for the binary without require('electron'), which would try to download it. */
function electronBinary(): string | undefined {
  const pkg = resolve('node_modules/electron');
  const pathFile = join(pkg, 'path.txt');
  if (!existsSync(pathFile)) return undefined;
  const binary = join(pkg, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(binary) ? binary : undefined;
}

const binary = electronBinary();
if (binary && !process.env.SOFTPHONE_BROWSER_HOST) {
  const build = spawn(process.execPath, ['scripts/build-electron.mjs'], { stdio: 'inherit' });
  build.on('exit', (code) => {
    if (code !== 0) process.exit(code ?? 1);
    const app = spawn(binary, ['.', ...process.argv.slice(2)], { stdio: 'inherit' });
    app.on('exit', (c) => process.exit(c ?? 0));
  });
} else {
  console.log('Electron runtime not available here (node_modules/electron has no binary): serving the browser host instead.');
  void runBrowserHost(process.argv.slice(2));
}
