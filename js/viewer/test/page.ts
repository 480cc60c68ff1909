// Driving the viewer's page in the browser tests: opening it with its
// script errors recorded, giving it a file through the picker, waiting for a
// field to be drawn, and reading the map, the colour bar and the read-out.

import assert from "node:assert/strict";
import type { Browser, Page } from "puppeteer-core";

/** A page of the viewer with the uncaught script errors seen on it so far. */
export type ViewerPage = Page & { errors: string[] };

/** A new tab on `url`, recording the page's uncaught errors (tests expect none). */
export async function openPage(browser: Browser, url: string): Promise<ViewerPage> {
  const page = (await browser.newPage()) as ViewerPage;
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(String(e)));
  await page.goto(url);
  return page;
}

/** Opens the local file at `path` through the page's file picker. */
export async function upload(page: Page, path: string): Promise<void> {
  const input = await page.$("#file-input");
  assert.ok(input);
  await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(path);
}

/** Waits until the field `key` ("msg:obj") is drawn. */
export const rendered = (page: Page, key: string, timeout = 20_000) =>
  page.waitForFunction((k) => document.body.dataset["rendered"] === k, { timeout }, key);

/** The colour bar's colours, one per run of equal pixels, left to right, as #rrggbb. */
export function barColours(page: Page): Promise<string[]> {
  return page.$eval("#colourbar-canvas", (e) => {
    const c = e as HTMLCanvasElement;
    const px = c.getContext("2d")!.getImageData(0, 0, c.width, 1).data;
    const runs: string[] = [];
    for (let x = 0; x < c.width; x++) {
      const h = "#" + [0, 1, 2].map((k) => px[4 * x + k]!.toString(16).padStart(2, "0")).join("");
      if (runs.at(-1) !== h) runs.push(h);
    }
    return runs;
  });
}

/** Waits for the page's error state and returns the message it shows. */
export async function errorText(page: Page): Promise<string> {
  await page.waitForFunction(() => document.body.dataset["state"] === "error", { timeout: 20_000 });
  return page.$eval("#error", (e) => e.textContent ?? "");
}

/** Device pixel centre → lon/lat for the whole-globe equirectangular fit (margin 8 px). */
export function expectedLonLat(w: number, h: number, x: number, y: number): [number, number] {
  const k = Math.min((w - 16) / (2 * Math.PI), (h - 16) / Math.PI);
  return [(((x + 0.5 - w / 2) / k) * 180) / Math.PI, ((-(y + 0.5 - h / 2) / k) * 180) / Math.PI];
}

export interface MapBox { x: number; y: number; w: number; h: number; cw: number; ch: number }

/** The map canvas: its place on the page (CSS pixels) and its size in device pixels. */
export async function mapBox(page: Page): Promise<MapBox> {
  return (await page.$eval("#map", (e) => {
    const r = e.getBoundingClientRect();
    const c = e as HTMLCanvasElement;
    return { x: r.left, y: r.top, w: r.width, h: r.height, cw: c.width, ch: c.height };
  }))!;
}

/**
 * Moves the mouse to the fraction (fx, fy) of the map and waits until the
 * read-out shows that canvas pixel; returns the pixel and the read-out.
 * Chromium delivers whole CSS pixels to mouse events: the canvas pixel under
 * the cursor is computed from the rounded position.
 */
export async function hover(page: Page, box: MapBox, fx: number, fy: number) {
  const cx = Math.round(box.x + box.w * fx);
  const cy = Math.round(box.y + box.h * fy);
  const px = Math.floor(cx - box.x);
  const py = Math.floor(cy - box.y);
  await page.mouse.move(cx, cy);
  await page.waitForFunction((x, y) => {
    const d = document.getElementById("readout")!.dataset;
    return !document.getElementById("readout")!.hidden && d["x"] === String(x) && d["y"] === String(y);
  }, {}, px, py);
  const readout: Record<string, string | undefined> = await page.$eval("#readout", (e) => ({ ...(e as HTMLElement).dataset }));
  return { px, py, readout };
}
