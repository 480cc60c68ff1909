// The viewer in a real browser (Debian's headless Chromium through
// puppeteer-core): the built site (dist/, `npm run build` first) is served on
// loopback; files are made here with the tensogram and metatensor packages.
// Opening files of every kind and from every source; the page's controls
// (colour scale, display options, sidebar, phone layout) are in
// controls.test.ts, lazy reading in lazy.test.ts.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "puppeteer-core";
import { init, encode, decode, scan } from "@tensogram/tensogram";
import { MetatensorWriter } from "@tensogram/metatensor";
import { Nginx, nginxMissing, type LogEntry } from "./nginx.js";
import { bruteNearest, fibonacci } from "./points.js";
import { NLAT, NLON, STEPS, field, makeTgm, mars } from "./fields.js";
import { SITE, checkScreenshot, comparePng, distinctColours, startSession, type BrowserSession, type TestServer } from "./helpers.js";
import { barColours, errorText, expectedLonLat, hover, mapBox, openPage, rendered, upload, type ViewerPage } from "./page.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "../..");
const REFERENCE = join(ROOT, "test", "reference");

/** A message whose declared shape is 65535 × 65535 (patched in place: same byte length). */
function makeHugeShape(): Uint8Array {
  const m = encode({ base: [{ mars: mars({ param: "huge", step: 0 }) }] }, [
    { descriptor: { shape: [1000, 1000], dtype: "float32", compression: "zstd" }, data: new Float32Array(1_000_000) },
  ]);
  const from = [0x82, 0x19, 0x03, 0xe8, 0x19, 0x03, 0xe8];
  let patched = 0;
  for (let k = 0; k + from.length <= m.length; k++) {
    if (from.every((b, x) => m[k + x] === b)) {
      m.set([0x82, 0x19, 0xff, 0xff, 0x19, 0xff, 0xff], k);
      patched++;
    }
  }
  assert.ok(patched >= 1, "shape [1000, 1000] not found in the encoded message");
  return m;
}

function makeMetatensor(big = false): Uint8Array {
  const schema = {
    type: "object",
    properties: {
      image: { type: "array", items: { type: "array", items: { type: "number", "TypeDef:Float32": true } } },
      series: { type: "array", items: { type: "number", "TypeDef:Float64": true } },
      particles: {
        type: "array",
        items: {
          type: "object", "TypeDef:Struct": true, required: ["id", "mass", "name"],
          properties: {
            id: { type: "integer", "TypeDef:Uint32": true },
            mass: { type: "number", "TypeDef:Float64": true },
            name: { type: "string", "TypeDef:String": true },
          },
        },
      },
      rows: { type: "array", items: { type: "array", "TypeDef:List": true, items: { type: "number", "TypeDef:Float64": true } } },
    },
  };
  const w = new MetatensorWriter(schema, { metadata: { source: "viewer test" } });
  const [rows, cols] = big ? [400, 300] : [20, 30];
  w.setFlat("image", [rows, cols], Float32Array.from({ length: rows * cols }, (_, k) => Math.sin(k / 17)));
  w.set("series", Array.from({ length: 100 }, (_, k) => Math.cos(k / 9)));
  w.set("particles", Array.from({ length: 120 }, (_, k) => ({ id: k, mass: k / 2, name: `p${k}` })));
  w.set("rows", [[1, 2, 3], [], [4.5]]);
  return w.serialize();
}

function writeTmp(name: string, bytes: Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
}

let session: BrowserSession | undefined;
let server: TestServer;
let browser: Browser;
let tmp: string;
let tgm: Uint8Array;

before(async () => {
  await init();
  tgm = makeTgm();
  session = await startSession("tgm-viewer-");
  ({ server, browser, tmp } = session);
});

after(() => session?.close());

const newPage = (query = ""): Promise<ViewerPage> => openPage(browser, server.url + query);

describe("tgm files", () => {
  test("open, browse, step, read a value, compare the picture", async () => {
    const page = await newPage();
    await upload(page, writeTmp("fields.tgm", tgm));
    await rendered(page, "0:0");
    // Grouped by param: 2t (3 steps), z (2 levels).
    const heads = await page.$$eval(".group-head", (es) => es.map((e) => (e as HTMLElement).dataset["param"]));
    assert.deepEqual(heads, ["2t", "z"]);
    // The selected field's group is open, the other closed.
    assert.equal(await page.$eval('.row[data-msg="0"][data-obj="0"]', (e) => (e as HTMLElement).offsetParent !== null), true);
    assert.equal(await page.$eval('.row[data-msg="3"][data-obj="0"]', (e) => (e as HTMLElement).offsetParent !== null), false);
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /T\+0h\s+1 \/ 3/);
    assert.match(await page.$eval("#metadata", (e) => e.textContent ?? ""), /"param": "2t"/);
    // 2t's auto style: its colour map, a fixed range of -40…40 °C, shown in °C.
    assert.equal(await page.evaluate(() => document.body.dataset["autoStyle"]), "2t");
    assert.equal(await page.$eval("#cmap", (e) => (e as HTMLSelectElement).value), "rdylbu");
    assert.equal(await page.$eval("#units", (e) => e.textContent), "2t (°C)");
    assert.deepEqual(await page.$$eval("#vmin, #vmax", (es) => es.map((e) => Number((e as HTMLInputElement).value))), [-40, 40]);

    // → steps to T+6h (message 1).
    await page.keyboard.press("ArrowRight");
    await rendered(page, "1:0");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /T\+6h\s+2 \/ 3/);
    await page.waitForFunction(() => document.getElementById("map")?.dataset["coastlines"] === "yes");

    // The value under the cursor is the decoded value of the grid point there.
    const box = await mapBox(page);
    const decodedStep6 = (() => {
      const p = encode({ base: [{}] }, [{ descriptor: { shape: [NLAT, NLON], dtype: "float32" }, data: field(6) }]);
      const d = decode(p);
      const v = d.objects[0]!.data() as Float32Array;
      d.close();
      return v;
    })();
    for (const [fx, fy] of [[0.3, 0.35], [0.62, 0.58], [0.81, 0.22]] as const) {
      const { px, py, readout: r } = await hover(page, box, fx, fy);
      const [lon, lat] = expectedLonLat(box.cw, box.ch, px, py);
      const i = Math.round((90 - lat) / 2);
      const j = ((Math.round((lon + 180) / 2) % NLON) + NLON) % NLON;
      assert.equal(Number(r["i"]), i, `row at (${px}, ${py})`);
      assert.equal(Number(r["j"]), j, `column at (${px}, ${py})`);
      assert.equal(Number(r["value"]), decodedStep6[i * NLON + j], `value at grid point (${i}, ${j})`);
      assert.ok(Math.abs(Number(r["lat"]) - (90 - 2 * i)) < 1e-9);
    }

    // A click inspects the point: its value at every step.
    await page.mouse.click(Math.round(box.x + box.w * 0.45), Math.round(box.y + box.h * 0.4));
    await page.waitForFunction(() => document.getElementById("inspector")!.dataset["values"] !== undefined);
    const ins: Record<string, string | undefined> = await page.$eval("#inspector", (e) => ({ ...(e as HTMLElement).dataset }));
    const k = Number(ins["i"]) * NLON + Number(ins["j"]);
    assert.deepEqual(ins["values"]!.split(",").map(Number), STEPS.map((s) => field(s)[k]));
    await page.click("#inspector-close");

    await page.mouse.move(box.x + 1, box.y + box.h - 1);
    const shot = await (await page.$("#map"))!.screenshot({ type: "png" });
    const d = checkScreenshot(REFERENCE, "tgm-step6-flat.png", shot);
    console.log(`# screenshot tgm-step6-flat.png: ${d.updated ? "reference written" : `${d.differing} of ${d.total} pixels differ`}`);

    // Contour mode: 20 filled bands (the colour bar), far fewer colours than the continuous map.
    const continuous = distinctColours(shot);
    assert.ok((await barColours(page)).length > 100);
    await page.click('[data-mode="contour"]');
    const bands = distinctColours(await (await page.$("#map"))!.screenshot({ type: "png" }));
    assert.ok(bands < continuous / 2, `contours: ${bands} colours vs ${continuous}`);
    assert.equal((await barColours(page)).length, 20);
    await page.click('[data-mode="heatmap"]');

    // Globe: the read-out at the centre of the disk works there too.
    await page.click('[data-proj="globe"]');
    await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2);
    await page.waitForFunction(() => !document.getElementById("readout")!.hidden);
    const g = await page.$eval("#readout", (e) => ({ ...(e as HTMLElement).dataset }));
    assert.equal(Number(g["value"]), decodedStep6[Number(g["i"]) * NLON + Number(g["j"])]);
    await page.mouse.move(1, 1);
    await page.waitForFunction(() => document.getElementById("readout")!.hidden);
    const globe = await (await page.$("#map"))!.screenshot({ type: "png" });
    const gd = checkScreenshot(REFERENCE, "tgm-step6-globe.png", globe);
    console.log(`# screenshot tgm-step6-globe.png: ${gd.updated ? "reference written" : `${gd.differing} of ${gd.total} pixels differ`}`);
    // The comparison is not vacuous: the two projections differ widely.
    const cross = comparePng(shot, globe);
    assert.ok(cross.differing > 0.2 * cross.total, `flat vs globe: ${cross.differing} of ${cross.total}`);
    await page.click('[data-proj="flat"]');

    // K → °C for the colour bar, the range boxes and the read-out (from K, the native units).
    await page.click("#alt-units");
    assert.equal(await page.$eval("#units", (e) => e.textContent), "2t (K)");
    assert.equal(Number(await page.$eval("#vmin", (e) => (e as HTMLInputElement).value)), 233.15);
    const kelvinMin = Number(await page.$eval("#vmin", (e) => (e as HTMLInputElement).value));
    await page.click("#alt-units");
    assert.equal(await page.$eval("#units", (e) => e.textContent), "2t (°C)");
    const celsiusMin = Number(await page.$eval("#vmin", (e) => (e as HTMLInputElement).value));
    assert.ok(Math.abs(celsiusMin - (kelvinMin - 273.15)) < 1e-3, `${celsiusMin} vs ${kelvinMin}`);
    await page.mouse.move(Math.round(box.x + box.w / 2), Math.round(box.y + box.h / 2));
    await page.waitForFunction(() => !document.getElementById("readout")!.hidden);
    const readout = await page.$eval("#readout", (e) => ({ text: e.textContent ?? "", value: Number((e as HTMLElement).dataset["value"]) }));
    assert.ok(readout.text.endsWith("°C"), readout.text);
    assert.ok(Math.abs(Number(readout.text.trim().split(/\s+/).at(-2)) - (readout.value - 273.15)) < 1e-3, readout.text);
    await page.click("#alt-units");
    assert.equal(await page.$eval("#units", (e) => e.textContent), "2t (K)");
    // Keys go to a focused form control (Space ticks the box): leave it.
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

    // Space plays, the frames advance, Space pauses; ← goes back.
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.body.dataset["playing"] === "yes");
    await page.waitForFunction(() => document.body.dataset["frame"] === "2", { timeout: 10_000 });
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.body.dataset["playing"] === "no");
    const frame = Number(await page.evaluate(() => document.body.dataset["frame"]));
    await page.keyboard.press("ArrowLeft");
    await page.waitForFunction((f) => document.body.dataset["frame"] === String(Math.max(0, f - 1)), {}, frame);

    // The play button, then Space while it has the focus: one toggle, not two.
    await page.click("#play");
    await page.waitForFunction(() => document.body.dataset["playing"] === "yes");
    await page.keyboard.press("Space");
    await page.waitForFunction(() => document.body.dataset["playing"] === "no");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await page.evaluate(() => document.body.dataset["playing"]), "no");

    // The slider moves to a frame too.
    await page.$eval("#slider", (e) => {
      (e as HTMLInputElement).value = "2";
      e.dispatchEvent(new Event("input"));
    });
    await rendered(page, "2:0");

    // A level of "z" from the browser.
    await page.click('.group-head[data-param="z"]');
    await page.click('.row[data-msg="3"][data-obj="1"]');
    await rendered(page, "3:1");
    // One step on two levels: the animation walks the levels.
    assert.equal(await page.$eval("#anim", (e) => (e as HTMLElement).hidden), false);
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^850 hPa\s+2 \/ 2$/);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("open by dropping a file on the page", async () => {
    const page = await newPage();
    await page.evaluate((b64: string) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], "dropped.tgm"));
      window.dispatchEvent(new DragEvent("dragenter", { dataTransfer: dt, bubbles: true, cancelable: true }));
      window.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, Buffer.from(tgm).toString("base64"));
    await rendered(page, "0:0");
    assert.equal(await page.$eval("#file-title", (e) => e.textContent), "dropped.tgm");
    assert.equal(await page.$eval("#drop-overlay", (e) => (e as HTMLElement).hidden), true);
    await page.close();
  });

  test("open by URL (?url=): the first 64 KiB, then Range requests per message, never the whole file", async () => {
    server.files.set("remote.tgm", tgm);
    assert.ok(tgm.length > 65536);
    const page = await newPage("?url=/files/remote.tgm");
    await rendered(page, "0:0");
    const mine = server.ranges.filter((r) => r.startsWith("/files/remote.tgm"));
    assert.equal(mine[0], "/files/remote.tgm bytes=0-65535");
    for (const r of mine) {
      assert.match(r, /^\/files\/remote\.tgm bytes=\d+-\d+$/);
      assert.notEqual(r, `/files/remote.tgm bytes=0-${tgm.length - 1}`);
    }
    // At most a preamble and a layout read per message beyond the first 64 KiB.
    assert.ok(mine.length <= 1 + 2 * scan(tgm).length, mine.join(", "));
    await page.close();
  });

  test("open by URL from a server without ranges: one whole GET", async () => {
    server.files.set("plain.tgm", tgm);
    server.noRanges.add("plain.tgm");
    const page = await newPage("?url=/files/plain.tgm");
    await rendered(page, "0:0");
    assert.equal(server.requests.get("/files/plain.tgm"), 1);
    await page.close();
  });
});

// A reference implementation's file (not copied: read where the fixtures live).
const FIXTURE = process.env["TENSOGRAM_FIXTURES"] ?? "/work/shared/fixtures/tgm";

describe("animation over steps or levels", () => {
  test("t on two levels at two steps: steps at a level, or levels at a step; the inspector names the level", async () => {
    const parts: Uint8Array[] = [];
    for (const step of [0, 6]) {
      for (const levelist of [500, 850]) {
        parts.push(encode({ base: [{ mars: mars({ param: "t", levtype: "pl", levelist, step }), units: "K" }] }, [
          { descriptor: { shape: [NLAT, NLON], dtype: "float32" }, data: field(step, levelist / 10) },
        ]));
      }
    }
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (bytes.set(p, at), at + p.length), 0);
    const page = await newPage();
    await upload(page, writeTmp("levels.tgm", bytes));
    await rendered(page, "0:0");
    // Over steps first: t at 500 hPa, T+0h then T+6h (messages 0 and 2).
    assert.equal(await page.$eval("#anim-axis", (e) => (e as HTMLElement).hidden), false);
    assert.equal(await page.$eval("#anim-axis", (e) => (e as HTMLSelectElement).value), "steps");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^T\+0h\s+1 \/ 2$/);
    await page.keyboard.press("ArrowRight");
    await rendered(page, "2:0");
    const box = await mapBox(page);
    await page.mouse.click(Math.round(box.x + box.w * 0.4), Math.round(box.y + box.h * 0.4));
    await page.waitForFunction(() => document.getElementById("inspector")!.dataset["values"] !== undefined);
    assert.match(await page.$eval("#inspector-title", (e) => e.textContent ?? ""), /^t at 500 hPa, /);
    await page.click("#inspector-close");
    // Over levels: at T+6h, 500 then 850 hPa (messages 2 and 3).
    await page.select("#anim-axis", "levels");
    await rendered(page, "2:0");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^500 hPa\s+1 \/ 2$/);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.keyboard.press("ArrowRight");
    await rendered(page, "3:0");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^850 hPa\s+2 \/ 2$/);
    // A row of another step keeps the levels and walks them at that step.
    await page.click('.row[data-msg="1"][data-obj="0"]');
    await rendered(page, "1:0");
    assert.match(await page.$eval("#frame-label", (e) => e.textContent ?? ""), /^850 hPa\s+2 \/ 2$/);
    await page.keyboard.press("ArrowLeft");
    await rendered(page, "0:0");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("levels packed in one tensor", () => {
  test("[2, rows, columns]: a level box, the read-out and the inspector follow the level", async () => {
    const both = new Float32Array(2 * NLAT * NLON);
    both.set(field(0), 0);
    both.set(field(0, 500), NLAT * NLON);
    const bytes = encode({ base: [{ mars: mars({ param: "t", levtype: "pl", step: 0 }), anemoi: { levels: [850, 500] } }] }, [
      { descriptor: { shape: [2, NLAT, NLON], dtype: "float32" }, data: both },
    ]);
    server.files.set("packed.tgm", bytes);
    const page = await newPage("?url=/files/packed.tgm");
    await rendered(page, "0:0");
    assert.deepEqual(await page.$$eval("#packed-level option", (es) => es.map((e) => e.textContent)), ["level 850", "level 500"]);
    const box = await mapBox(page);
    const at = async () => {
      await page.mouse.move(Math.round(box.x + box.w * 0.4), Math.round(box.y + box.h * 0.45));
      await page.waitForFunction(() => !document.getElementById("readout")!.hidden);
      const r: Record<string, string | undefined> = await page.$eval("#readout", (e) => ({ ...(e as HTMLElement).dataset }));
      return { k: Number(r["i"]) * NLON + Number(r["j"]), value: Number(r["value"]) };
    };
    const a = await at();
    assert.equal(a.value, both[a.k]);
    await page.select("#packed-level", "1");
    await page.mouse.move(1, 1);
    await page.waitForFunction(() => document.getElementById("readout")!.hidden);
    const b = await at();
    assert.equal(b.value, both[NLAT * NLON + b.k]);
    await page.mouse.click(Math.round(box.x + box.w * 0.4), Math.round(box.y + box.h * 0.45));
    await page.waitForFunction(() => document.getElementById("inspector")!.dataset["values"] !== undefined);
    assert.equal(Number(await page.$eval("#inspector", (e) => (e as HTMLElement).dataset["values"])), both[NLAT * NLON + b.k]);
    await page.close();
  });
});

describe("scattered points with latitude/longitude objects", () => {
  test("drawn on the map; the read-out gives the nearest point's value", async () => {
    const N = 20000;
    const { lat, lon } = fibonacci(N);
    const values = Float32Array.from(lat, (la, k) => 280 + 20 * Math.cos((la * Math.PI) / 90) + 5 * Math.sin((lon[k]! * Math.PI) / 45));
    const meta = (name: string) => ({ name, mars: { param: name === "tp" ? "tp" : undefined } });
    const bytes = encode({ base: [{ name: "latitude" }, { name: "longitude" }, { ...meta("tp"), name: undefined, units: "mm" }].map((m) => JSON.parse(JSON.stringify(m))) }, [
      { descriptor: { shape: [N], dtype: "float64" }, data: lat },
      { descriptor: { shape: [N], dtype: "float64" }, data: lon },
      { descriptor: { shape: [N], dtype: "float32" }, data: values },
    ]);
    server.files.set("points.tgm", bytes);
    const page = await newPage("?url=/files/points.tgm");
    await rendered(page, "0:2");
    assert.deepEqual(await page.$$eval(".group-head", (es) => es.map((e) => (e as HTMLElement).dataset["param"])), ["tp"], "coordinates are not fields");
    const box = await mapBox(page);
    for (const [fx, fy] of [[0.3, 0.4], [0.7, 0.6]] as const) {
      const { px, py, readout: r } = await hover(page, box, fx, fy);
      const [lo, la] = expectedLonLat(box.cw, box.ch, px, py);
      const k = bruteNearest(lat, lon, la, lo);
      assert.equal(Number(r["i"]), k, `point at (${px}, ${py})`);
      assert.equal(Number(r["value"]), values[k]);
    }
    await page.close();
  });
});

describe("a reference file without a lat/lon grid", { skip: !existsSync(join(FIXTURE, "mars_metadata.tgm")) && "fixtures not present" }, () => {
  test("mars_metadata.tgm is shown as an image with its values", async () => {
    const bytes = new Uint8Array(readFileSync(join(FIXTURE, "mars_metadata.tgm")));
    const d = decode(bytes);
    const expected = Array.from(d.objects[0]!.data() as unknown as ArrayLike<number>, (v) => Number(v));
    const shape = d.objects[0]!.descriptor.shape;
    d.close();
    server.files.set("mars_metadata.tgm", bytes);
    const page = await newPage("?url=/files/mars_metadata.tgm");
    await rendered(page, "0:0");
    assert.equal(await page.$eval("#tensor-view", (e) => (e as HTMLElement).dataset["kind"]), shape.length >= 2 ? "image" : "plot");
    const listed = (await page.$eval("#tensor-view pre", (e) => e.textContent ?? "")).split(" ").map(Number);
    assert.equal(listed.length, expected.length);
    listed.forEach((v, k) => assert.ok(Math.abs(v - expected[k]!) <= 1e-5 * Math.max(1, Math.abs(expected[k]!)), `value ${k}: ${v} vs ${expected[k]}`));
    await page.close();
  });
});

describe("bad input shows a message", () => {
  const cases: [string, () => Uint8Array, RegExp][] = [
    ["truncated.tgm", () => tgm.subarray(0, 200), /truncated|corrupt|cannot|not a readable/i],
    ["corrupted.tgm", () => {
      // 64 bytes in the middle of the first message (its zstd payload) flipped.
      const c = tgm.slice();
      const first = scan(tgm)[0]!;
      const mid = first.offset + Math.floor(first.length / 2);
      for (let k = 0; k < 64; k++) c[mid + k]! ^= 0x5a;
      return c;
    }, /Cannot decode 2t \(message 0, object 0\): .*(hash|zstd|corrupt|decompress)/i],
    ["notes.txt", () => new TextEncoder().encode("hello, this is not a tensor file at all\n".repeat(10)), /neither a Tensogram file/],
    ["huge.tgm", makeHugeShape, /65535, 65535|more than this viewer decodes/],
  ];
  for (const [name, make, expected] of cases) {
    test(name, async () => {
      const page = await newPage();
      await upload(page, writeTmp(name, make()));
      const text = await errorText(page);
      assert.match(text, expected);
      console.log(`# ${name}: ${text}`);
      // The page still answers: another file opens afterwards.
      await upload(page, writeTmp("good.tgm", tgm));
      await rendered(page, "0:0");
      await page.close();
    });
  }

  test("a URL that fails", async () => {
    const page = await newPage("?url=/files/missing.tgm");
    assert.match(await errorText(page), /HTTP 404/);
    await page.close();
  });
});

// The files `make demo` makes: examples/demo.cpp's .tgm (CTest passes its
// path, the demo_tgm fixture) and the metatensor file `metatensor from-tgm`
// makes of it (METATENSOR_CLI), as the demo's last line tells a user to open.
const DEMO_TGM = process.env["TENSOGRAM_DEMO_TGM"] ?? "";
const METATENSOR_CLI = process.env["METATENSOR_CLI"] ?? "";
describe("the demo's files", { skip: !(DEMO_TGM && existsSync(DEMO_TGM)) && "TENSOGRAM_DEMO_TGM not given" }, () => {
  test("demo.tgm: its field on the map, the value under the cursor is the decoded one", async () => {
    const bytes = new Uint8Array(readFileSync(DEMO_TGM));
    const d = decode(bytes);
    const obj = d.objects[0]!;
    const [rows, cols] = obj.descriptor.shape as number[];
    const values = Float64Array.from(obj.data() as unknown as ArrayLike<number>);
    d.close();
    server.files.set("demo.tgm", bytes);
    const page = await newPage("?url=/files/demo.tgm");
    await rendered(page, "0:0");
    assert.deepEqual(await page.$$eval(".group-head", (es) => es.map((e) => (e as HTMLElement).dataset["param"])), ["2t"]);
    await page.waitForFunction(() => document.getElementById("map")?.dataset["coastlines"] === "yes");
    const box = await mapBox(page);
    for (const [fx, fy] of [[0.25, 0.3], [0.7, 0.65]] as const) {
      const { readout: r } = await hover(page, box, fx, fy);
      const i = Number(r["i"]);
      const j = Number(r["j"]);
      assert.ok(i >= 0 && i < rows! && j >= 0 && j < cols!, JSON.stringify(r));
      assert.equal(Number(r["value"]), values[i * cols! + j], `value at grid point (${i}, ${j})`);
      // The demo's grid: 0.25° from 90° N.
      assert.ok(Math.abs(Number(r["lat"]) - (90 - 0.25 * i)) < 1e-9, JSON.stringify(r));
    }
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  test("demo.mt (metatensor from-tgm): the tensor list and the field as an image", { skip: !METATENSOR_CLI && "METATENSOR_CLI not given" }, async () => {
    const mt = join(tmp, "demo.mt");
    await new Promise<void>((ok, fail) => {
      const child = spawn(METATENSOR_CLI, ["from-tgm", DEMO_TGM, "-o", mt, "--name-key", "mars.param"], { stdio: "inherit" });
      child.on("error", fail);
      child.on("exit", (code) => (code === 0 ? ok() : fail(new Error(`metatensor from-tgm exited ${code}`))));
    });
    const page = await newPage();
    await upload(page, mt);
    await page.waitForFunction(() => document.body.dataset["state"] === "ready" && document.body.dataset["format"] === "metatensor");
    assert.deepEqual(await page.$$eval(".row[data-tensor]", (es) => es.map((e) => (e as HTMLElement).dataset["tensor"])), ["2t"]);
    await page.click('.row[data-tensor="2t"]');
    await page.waitForFunction(() => document.getElementById("tensor-view")?.dataset["kind"] === "image");
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});

describe("metatensor files", () => {
  test("tensor list, image, plot, paged table, ragged rows", async () => {
    const page = await newPage();
    await upload(page, writeTmp("data.mt", makeMetatensor()));
    await page.waitForFunction(() => document.body.dataset["state"] === "ready" && document.body.dataset["format"] === "metatensor");
    const names = await page.$$eval(".row[data-tensor]", (es) => es.map((e) => (e as HTMLElement).dataset["tensor"]));
    assert.deepEqual(names, ["image", "particles", "rows", "series"]);

    await page.click('.row[data-tensor="image"]');
    await page.waitForFunction(() => document.getElementById("tensor-view")?.dataset["kind"] === "image");
    assert.deepEqual(await page.$eval("#tensor-view canvas", (c) => [(c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height]), [30, 20]);

    await page.click('.row[data-tensor="series"]');
    await page.waitForFunction(() => document.getElementById("tensor-view")?.dataset["kind"] === "plot");

    await page.click('.row[data-tensor="particles"]');
    await page.waitForFunction(() => document.querySelector("#tensor-view .pager")?.textContent?.includes("rows 1–50 of 120"));
    const firstRow = await page.$$eval("#tensor-view tr:nth-child(2) td", (es) => es.map((e) => e.textContent));
    assert.deepEqual(firstRow, ["0", "0", "0", "p0"]);
    await page.click("#tensor-view .pager button:last-child");
    await page.waitForFunction(() => document.querySelector("#tensor-view .pager")?.textContent?.includes("rows 51–100 of 120"));
    assert.equal(await page.$eval("#tensor-view tr:nth-child(2) td:last-child", (e) => e.textContent), "p50");

    await page.click('.row[data-tensor="rows"]');
    await page.waitForFunction(() => document.querySelector("#tensor-view .pager")?.textContent?.includes("of 3"));
    const rows = await page.$$eval("#tensor-view tr td:last-child", (es) => es.map((e) => e.textContent));
    assert.deepEqual(rows, ["[1, 2, 3]", "[]", "[4.5]"]);
    await page.close();
  });
});

describe("metatensor over HTTP", () => {
  test("the header in one request, then one Range request per tensor shown", async () => {
    const big = makeMetatensor(true);
    assert.ok(big.length > 4 * 65536);
    server.files.set("big.mt", big);
    const page = await newPage("?url=/files/big.mt");
    await page.waitForFunction(() => document.body.dataset["state"] === "ready" && document.body.dataset["format"] === "metatensor");
    const mine = () => server.ranges.filter((r) => r.startsWith("/files/big.mt"));
    assert.deepEqual(mine(), ["/files/big.mt bytes=0-65535"]);
    await page.click('.row[data-tensor="image"]');
    await page.waitForFunction(() => document.getElementById("tensor-view")?.dataset["kind"] === "image");
    assert.equal(mine().length, 2);
    assert.match(mine()[1]!, /^\/files\/big\.mt bytes=\d+-\d+$/);
    const [a, b] = mine()[1]!.split("=")[1]!.split("-").map(Number);
    assert.equal(b! - a! + 1, 400 * 300 * 4, "exactly the image's bytes");
    await page.close();
  });
});

describe("range requests against nginx", { skip: nginxMissing() }, () => {
  const nginx = new Nginx(SITE);
  before(() => nginx.start());
  after(() => nginx.remove());

  /** The log lines for /files/<name>, waiting until `n` are there. */
  async function logFor(name: string, n: number, got: LogEntry[] = []): Promise<LogEntry[]> {
    for (let i = 0; i < 200 && got.length < n; i++) {
      got.push(...nginx.takeLog().filter((e) => e.uri === `/files/${name}`));
      if (got.length < n) await new Promise((r) => setTimeout(r, 10));
    }
    return got;
  }

  test("a metatensor file: the header, then one range per tensor shown", async () => {
    const big = makeMetatensor(true);
    nginx.put("big.mt", big);
    nginx.takeLog();
    const page = await browser.newPage();
    await page.goto(`${nginx.url}?url=/files/big.mt`);
    await page.waitForFunction(() => document.body.dataset["state"] === "ready" && document.body.dataset["format"] === "metatensor");
    const opened = await logFor("big.mt", 1);
    assert.deepEqual(opened, [{ uri: "/files/big.mt", range: "bytes=0-65535", status: 206, bytes: 65536 }]);
    await page.click('.row[data-tensor="image"]');
    await page.waitForFunction(() => document.getElementById("tensor-view")?.dataset["kind"] === "image");
    const shown = await logFor("big.mt", 1);
    assert.equal(shown.length, 1);
    assert.equal(shown[0]!.status, 206);
    assert.equal(shown[0]!.bytes, 400 * 300 * 4);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await logFor("big.mt", 0), [], "no further requests");
    await page.close();
  });

  test("a .tgm file: Range requests only, none of the whole file", async () => {
    nginx.put("fields.tgm", tgm);
    nginx.takeLog();
    const page = await browser.newPage();
    await page.goto(`${nginx.url}?url=/files/fields.tgm`);
    await rendered(page, "0:0");
    await new Promise((r) => setTimeout(r, 200));
    const log = await logFor("fields.tgm", 1);
    assert.deepEqual([log[0]!.range, log[0]!.status], ["bytes=0-65535", 206]);
    for (const e of log) {
      assert.equal(e.status, 206);
      assert.ok(e.bytes < tgm.length, JSON.stringify(e));
    }
    await page.close();
  });
});

describe("make viewer FILE=…: the preview server serves one local file, and a proxy", () => {
  test("?url=/local/<name> opens it, with Range requests", async () => {
    const path = writeTmp("local file.tgm", tgm);
    const port = await new Promise<number>((ok) => {
      const s = createNetServer();
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => ok(p));
      });
    });
    const child = spawn(process.execPath, [join(ROOT, "node_modules/vite/bin/vite.js"), "preview", "--port", String(port), "--strictPort"], {
      cwd: ROOT,
      env: { ...process.env, VIEWER_FILE: path },
      stdio: "ignore",
    });
    try {
      const base = `http://127.0.0.1:${port}/`;
      for (let i = 0; i < 300; i++) {
        if (await fetch(base).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const url = `/local/${encodeURIComponent("local file.tgm")}`;
      const part = await fetch(base + url.slice(1), { headers: { Range: "bytes=8-15" } });
      assert.equal(part.status, 206);
      assert.deepEqual(new Uint8Array(await part.arrayBuffer()), tgm.subarray(8, 16));
      const page = await browser.newPage();
      await page.goto(`${base}?url=${encodeURIComponent(url)}`);
      await rendered(page, "0:0");
      assert.equal(await page.$eval("#file-title", (e) => e.textContent), "local file.tgm");
      await page.close();

      // /api/proxy: 400 without a usable url; a file on another server (the
      // test server, which sends no CORS headers) opens through it, read with
      // Range requests only.
      const bad = await fetch(`${base}api/proxy?url=file:///etc/passwd`);
      assert.equal(bad.status, 400);
      assert.equal(bad.headers.get("x-tensogram-proxy"), "1");
      server.files.set("remote.tgm", tgm);
      const first = server.log.length;
      const remote = `${server.url}files/remote.tgm`;
      const direct = await browser.newPage();
      await direct.goto(`${base}?url=${encodeURIComponent(remote)}`);
      await rendered(direct, "0:0");
      assert.equal(await direct.$eval("#file-title", (e) => e.textContent), "remote.tgm");
      const seen = server.log.slice(first).filter((r) => r.path === "/files/remote.tgm");
      assert.ok(seen.length > 0 && seen.every((r) => r.range !== "" && r.status === 206), JSON.stringify(seen));
      // The same file asked of the proxy directly: the range and the headers come back.
      const part2 = await fetch(`${base}api/proxy?url=${encodeURIComponent(remote)}`, { headers: { Range: "bytes=8-15" } });
      assert.equal(part2.status, 206);
      assert.equal(part2.headers.get("content-range"), `bytes 8-15/${tgm.byteLength}`);
      assert.deepEqual(new Uint8Array(await part2.arrayBuffer()), tgm.subarray(8, 16));
      // Without the proxy (the test server serves the page too, and has none),
      // the same URL is read directly and the browser refuses it: a message.
      const served = await newPage(`?url=${encodeURIComponent(remote.replace("127.0.0.1", "localhost"))}`);
      assert.match(await errorText(served), /Cannot open remote\.tgm/);
      await served.close();
      await direct.close();
    } finally {
      child.kill("SIGTERM");
    }
  });
});
