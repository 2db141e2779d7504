// Headless Chromium for the web view's tests: Debian's `chromium` package
// (installed by install-chromium.sh when missing, its downloads cached under
// ~/.cache/apt), driven by playwright-core, which downloads no browser of its
// own; and axe-core, run inside the page.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ROOT } from './controlplane-cli.js';

const run = promisify(execFile);

/** Installs chromium if missing (a no-op when it is there) and returns its path. */
export async function chromiumPath(): Promise<string> {
  // From the repository (ROOT), or from the working directory when this file runs compiled elsewhere (bench/).
  const script = [ROOT, process.cwd()].map((dir) => path.join(dir, 'test', 'support', 'install-chromium.sh')).find((f) => existsSync(f));
  if (!script) throw new Error('test/support/install-chromium.sh not found');
  await run('bash', [script], { timeout: 600_000 });
  const { stdout } = await run('bash', ['-c', 'command -v chromium']);
  return stdout.trim();
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumPath(),
    // As root (the test machines), Chromium's sandbox cannot start.
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
}

export interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** The axe-core violations of the page as it is now (WCAG 2.x A and AA, and best practices). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(source);
  return page.evaluate(async () => {
    const { axe, document } = globalThis as unknown as { document: unknown; axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: AxeViolation[] }> } };
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
}
