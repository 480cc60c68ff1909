// Constants Vite replaces at build time (vite.config.ts, `define`).
declare const __VIEWER_VERSION__: string;
declare const __TENSOGRAM_VERSION__: string;
