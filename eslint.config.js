// Folder boundaries are process boundaries (ARCHITECTURE.md, style.md 1): each folder may import
// only what its environment has. These rules make a wrong import a lint error, not a review comment.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';

const nodeBuiltins = [
  'assert', 'buffer', 'child_process', 'cluster', 'crypto', 'dgram', 'dns', 'events', 'fs', 'fs/promises',
  'http', 'http2', 'https', 'net', 'os', 'path', 'process', 'readline', 'stream', 'timers', 'tls', 'url',
  'util', 'worker_threads', 'zlib',
];
const nodeOnly = ['node:*', ...nodeBuiltins, 'undici', 'ws', 'werift', 'opusscript', 'tsx'];

// Bare names are matched exactly (so Node's `events` does not catch `./events`); globs as patterns.
const restrict = (names, message) => {
  const isGlob = (n) => n.includes('*');
  return {
    'no-restricted-imports': [
      'error',
      {
        paths: names.filter((n) => !isGlob(n)).map((name) => ({ name, message })),
        patterns: [{ group: names.filter(isGlob), message }],
      },
    ],
  };
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'release/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    files: ['shared/**/*.ts'],
    languageOptions: { globals: {} },
    rules: restrict(
      ['electron', 'electron/*', ...nodeOnly, 'react', 'react-dom', 'zustand', '**/electron/**', '**/renderer/**', '**/relay/**', '**/sandbox/**', '**/bridge/**'],
      'shared/ holds contracts and pure logic: no Electron, Node or DOM, and no other folder (ARCHITECTURE.md).',
    ),
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...restrict(
        ['electron', 'electron/*', ...nodeOnly, '**/electron/**', '**/relay/**', '**/sandbox/**'],
        'renderer/ talks to the main process only through window.softphone (SoftphoneApi); it never imports electron/ or Node.',
      ),
    },
  },
  {
    files: ['electron/core/**/*.ts', 'electron/browser/**/*.ts'],
    rules: restrict(['electron', 'electron/*', '**/renderer/**', '**/desktop/**'], 'Only electron/desktop/ imports electron.'),
  },
  {
    files: ['electron/desktop/**/*.ts'],
    rules: restrict(['**/renderer/**', '**/browser/**'], 'The Electron host loads the built renderer; it does not import it.'),
  },
  {
    files: ['relay/**/*.ts', 'sandbox/**/*.ts'],
    rules: restrict(['electron', 'electron/*', '**/electron/**', '**/renderer/**'], 'relay/ and sandbox/ may import Node and shared/ only (and bridge/, which the relay runs with --bridge).'),
  },
  {
    files: ['bridge/**/*.ts'],
    rules: {
      ...restrict(['electron', 'electron/*', '**/electron/**', '**/renderer/**', '**/relay/**', '**/sandbox/**'], 'bridge/ may import Node and shared/ only.'),
      'max-lines': ['error', { max: 400 }],
    },
  },
  // One concern per file: the media engine's parts and the main process's services stay small
  // enough to read whole (renderer/README.md, electron/core/README.md).
  {
    files: ['renderer/webrtc/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400 }] },
  },
  {
    files: ['electron/core/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 500 }] },
  },
);
