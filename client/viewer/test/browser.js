/** Headless Chromium (Debian's) through puppeteer-core, with software WebGL (SwiftShader). */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import puppeteer from 'puppeteer-core';

/** The Chromium binary: $CHROMIUM, else Debian's. */
export function chromiumPath() {
  for (const candidate of [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  return null;
}

/** Where screenshots are kept: $COLLIDE_ARTIFACT_DIR (ctest: the build's viewer-artifacts/). */
export function artifactDir() {
  const dir = process.env.COLLIDE_ARTIFACT_DIR ?? path.join(os.tmpdir(), 'collide-viewer-artifacts');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export async function launchBrowser({ width = 800, height = 600 } = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'collide-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    userDataDir,
    defaultViewport: { width, height },
    args: [
      // Root in a container has no user namespaces for Chromium's sandbox.
      '--no-sandbox',
      '--use-angle=swiftshader',
      '--enable-unsafe-swiftshader',
      '--ignore-gpu-blocklist',
      '--disable-dev-shm-usage',
      '--disable-background-timer-throttling',
      '--disable-renderer-backgrounding',
      `--window-size=${width},${height}`,
    ],
  });
  const close = browser.close.bind(browser);
  browser.close = async () => {
    await close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return browser;
}
