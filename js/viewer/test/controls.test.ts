// The viewer's controls in a real browser (as viewer.test.ts): the colour
// scale's palette editor, the display options, the sidebar's edge, the
// inspector, the animation speed and the phone layout's bottom sheet.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import { init } from "@tensogram/tensogram";
import { makeTgm } from "./fields.js";
import { comparePng, startSession, type BrowserSession, type TestServer } from "./helpers.js";
import { barColours, mapBox, openPage, rendered, upload, type ViewerPage } from "./page.js";


let session: BrowserSession | undefined;
let server: TestServer;
let browser: Browser;
let tmp: string;
let tgmPath: string;

before(async () => {
  await init();
  session = await startSession("tgm-viewer-controls-");
  ({ server, browser, tmp } = session);
  tgmPath = join(tmp, "fields.tgm");
  writeFileSync(tgmPath, makeTgm());
});

after(() => session?.close());

const newPage = (): Promise<ViewerPage> => openPage(browser, server.url);

describe("colour scale", () => {
  test("custom palette: seeded from the palette in use, stops added, recoloured, moved, deleted; contours one band per stop", async () => {
    const page = await newPage();
    await upload(page, tgmPath);
    await rendered(page, "0:0");
    const before = await barColours(page);
    await page.select("#cmap", "custom");
    assert.equal(await page.$eval("#palette-editor", (e) => (e as HTMLElement).hidden), false);
    const stops = async () => JSON.parse((await page.$eval("#palette-editor", (e) => (e as HTMLElement).dataset["stops"])) ?? "[]") as [number, string][];
    let s = await stops();
    assert.deepEqual(s.map((x) => x[0]), [0, 0.25, 0.5, 0.75, 1]);
    // The ends are the previous palette's ends (the bar samples entry 0 and 255).
    assert.equal(s[0]![1], before[0]);
    assert.equal(s[4]![1], before.at(-1));

    // A click on the bar at 40 % adds a stop there.
    const bar = (await page.$eval("#palette-editor canvas", (e) => {
      const r = e.getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, h: r.height };
    }))!;
    await page.mouse.click(bar.x + bar.w * 0.4, bar.y + 3);
    s = await stops();
    assert.equal(s.length, 6);
    assert.ok(s.some((x) => Math.abs(x[0] - 0.4) < 0.02), JSON.stringify(s));

    // Contour mode: one band per stop, in the stops' colours.
    await page.click('[data-mode="contour"]');
    assert.deepEqual(await barColours(page), s.map((x) => x[1]));

    // A click on a handle picks its colour (the colour input; set here as the dialog would).
    const handle = async (k: number) => (await page.$$("#palette-editor .stop"))[k]!;
    await (await handle(1)).click();
    await page.$eval('#palette-editor input[type="color"]', (e) => {
      (e as HTMLInputElement).value = "#ff00ff";
      e.dispatchEvent(new Event("input"));
    });
    assert.ok((await barColours(page)).includes("#ff00ff"));

    // Dragged to 90 %: it moves.
    const h1 = (await (await handle(1)).boundingBox())!;
    await page.mouse.move(h1.x + h1.width / 2, h1.y + h1.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + bar.w * 0.9, h1.y + h1.height / 2, { steps: 5 });
    await page.mouse.up();
    s = await stops();
    assert.ok(s.some((x) => Math.abs(x[0] - 0.9) < 0.02 && x[1] === "#ff00ff"), JSON.stringify(s));
    assert.equal((await barColours(page)).at(-2), "#ff00ff");

    // Right-click deletes, down to two stops and no further.
    for (let k = 0; k < 6; k++) await (await handle(0)).click({ button: "right" });
    assert.equal((await stops()).length, 2);
    assert.equal((await barColours(page)).length, 2);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("display options: coastlines and grid lines off and on, remembered across a reload", async () => {
    const page = await newPage();
    await upload(page, tgmPath);
    await rendered(page, "0:0");
    await page.waitForFunction(() => document.getElementById("map")?.dataset["coastlines"] === "yes");
    const shot = async () => (await page.$("#map"))!.screenshot({ type: "png" });
    const withLines = await shot();
    await page.click("#show-coastlines");
    await page.waitForFunction(() => document.getElementById("map")?.dataset["coastlines"] === "off");
    const noCoast = await shot();
    await page.click("#show-graticule");
    await new Promise((r) => setTimeout(r, 200));
    const bare = await shot();
    const d1 = comparePng(withLines, noCoast);
    const d2 = comparePng(noCoast, bare);
    assert.ok(d1.differing > 1000, `coastlines: ${d1.differing} pixels`);
    assert.ok(d2.differing > 1000, `grid lines: ${d2.differing} pixels`);
    // Remembered: a new visit starts with both off.
    await page.reload();
    assert.deepEqual(await page.$$eval("#show-coastlines, #show-graticule", (es) => es.map((e) => (e as HTMLInputElement).checked)), [false, false]);
    // (The toolbar shows once a field is drawn: ticked by script here.)
    await page.$eval("#show-coastlines", (e) => (e as HTMLInputElement).click());
    await page.$eval("#show-graticule", (e) => (e as HTMLInputElement).click());
    await page.reload();
    assert.deepEqual(await page.$$eval("#show-coastlines, #show-graticule", (es) => es.map((e) => (e as HTMLInputElement).checked)), [true, true]);
    await page.close();
  });

  test("the sidebar's edge, the version, the inspector's level and closing it by a press outside", async () => {
    const page = await newPage();
    await page.setViewport({ width: 1200, height: 700, deviceScaleFactor: 1 });
    await upload(page, tgmPath);
    await rendered(page, "0:0");
    assert.equal(await page.$eval("#version", (e) => e.textContent), "v0.1.0");
    const width = () => page.$eval("#sidebar", (e) => e.getBoundingClientRect().width);
    assert.equal(await width(), 380);
    const drag = async (dx: number) => {
      const h = (await (await page.$("#sidebar-resize"))!.boundingBox())!;
      await page.mouse.move(h.x + h.width / 2, h.y + 300);
      await page.mouse.down();
      await page.mouse.move(h.x + h.width / 2 + dx, h.y + 300, { steps: 4 });
      await page.mouse.up();
      return width();
    };
    assert.equal(await drag(100), 480);
    assert.equal(await drag(1000), 600);
    assert.equal(await drag(-1000), 280);

    // z: one step on two pressure levels, so the animation walks the levels
    // and the inspector gives the point's value on each.
    await page.click('.group-head[data-param="z"]');
    await page.click('.row[data-msg="3"][data-obj="1"]');
    await rendered(page, "3:1");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^850 hPa\s+2 \/ 2$/);
    assert.equal(await page.$eval("#anim-axis", (e) => (e as HTMLElement).hidden), true);
    const box = await mapBox(page);
    await page.mouse.click(Math.round(box.x + box.w * 0.5), Math.round(box.y + box.h * 0.5));
    await page.waitForFunction(() => document.getElementById("inspector")!.dataset["values"] !== undefined && !document.getElementById("inspector")!.hidden);
    assert.match(await page.$eval("#inspector-title", (e) => e.textContent ?? ""), /^z on 2 levels, /);
    assert.match(await page.$eval("#inspector-values", (e) => e.textContent ?? ""), /^500 hPa: .*850 hPa: /);
    // A press outside it (here on the sidebar) closes it.
    await page.mouse.click(100, 650);
    assert.equal(await page.$eval("#inspector", (e) => (e as HTMLElement).hidden), true);
    await page.close();
  });

  test("the animation speed: 0.5 to 60 frames per second", async () => {
    const page = await newPage();
    await upload(page, tgmPath);
    await rendered(page, "0:0");
    assert.deepEqual(await page.$eval("#fps", (e) => [(e as HTMLInputElement).min, (e as HTMLInputElement).max, (e as HTMLInputElement).step, (e as HTMLInputElement).value]), ["0.5", "60", "0.5", "2"]);
    await page.$eval("#fps", (e) => {
      (e as HTMLInputElement).value = "30";
      e.dispatchEvent(new Event("input"));
    });
    assert.equal(await page.$eval("#fps-label", (e) => e.textContent), "30");
    // One tick mark per frame on the step slider.
    assert.equal(await page.$$eval("#slider-ticks option", (es) => es.length), 3);
    // At 30 fps three frames wrap around in well under a second.
    await page.click("#play");
    await page.waitForFunction(() => document.body.dataset["frame"] === "2", { timeout: 2_000 });
    await page.click("#play");
    await page.close();
  });
});

describe("phone layout", () => {
  test("at 390 px: the map fills the screen, the browser is a bottom sheet dragged by its handle", async () => {
    const page = await newPage();
    await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 1 });
    await page.reload();
    const rects = () => page.evaluate(() => {
      const r = (id: string) => document.getElementById(id)!.getBoundingClientRect();
      return { main: r("main").toJSON(), sheet: r("sidebar").toJSON(), anim: r("anim").toJSON(), snap: document.body.dataset["sheet"] };
    }) as Promise<{ main: DOMRect; sheet: DOMRect; anim: DOMRect; snap: string }>;
    // Before a file: collapsed to its handle.
    await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().height === 28);
    await upload(page, tgmPath);
    await rendered(page, "0:0");
    // Loaded: half the screen; the map full width and height; the animation bar just above the sheet.
    await page.waitForFunction(() => Math.abs(document.getElementById("sidebar")!.getBoundingClientRect().height - 422) < 1);
    let r = await rects();
    assert.equal(r.snap, "half");
    assert.ok(r.main.width >= 389 && r.sheet.width >= 389 && r.main.height >= 843, JSON.stringify(r));
    assert.ok(Math.abs(r.anim.bottom - r.sheet.top) < 1, JSON.stringify(r));
    // The colour controls start minimised.
    const cmapWidth = () => page.$eval("#cmap", (e) => (e as HTMLElement).getBoundingClientRect().width);
    assert.equal(await cmapWidth(), 0);
    await page.click("#controls-toggle");
    assert.ok((await cmapWidth()) > 0);

    const drag = async (dy: number) => {
      // The sheet animates its height for .2 s after a drag: measure the handle once it has
      // settled, or the press lands where the handle was (and a loaded machine makes that likely).
      await page.waitForFunction(() => document.getElementById("sidebar")!.getAnimations().length === 0);
      const h = (await (await page.$("#sheet-handle"))!.boundingBox())!;
      await page.mouse.move(h.x + h.width / 2, h.y + 10);
      await page.mouse.down();
      await page.mouse.move(h.x + h.width / 2, h.y + 10 + dy, { steps: 6 });
      await page.mouse.up();
      return (await rects()).snap;
    };
    assert.equal(await drag(-30), "half"); // < 60 px: ignored
    assert.equal(await drag(-80), "full");
    await page.waitForFunction(() => Math.abs(document.getElementById("sidebar")!.getBoundingClientRect().height - 0.9 * 844) < 1);
    assert.equal(await drag(200), "collapsed"); // > 120 px: skips half
    await page.waitForFunction(() => document.getElementById("sidebar")!.getBoundingClientRect().height === 28);
    r = await rects();
    assert.ok(Math.abs(r.anim.bottom - r.sheet.top) < 1, JSON.stringify(r));
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
