// Loaded only after tsx's loader is registered (src/cli/typescript.ts), so that this module is compiled by tsx,
// which rewrites its dynamic import: an import of a CommonJS TypeScript file then sees the file's named exports.
// Never import this module statically.

export const importThroughTsx = (url: string): Promise<unknown> => import(url);
