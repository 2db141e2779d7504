import { readFileSync } from 'node:fs';

/** The version of this package (read from package.json, from src/ or dist/). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
