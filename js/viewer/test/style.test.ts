// The viewer's pure rules without a browser: the custom palette's tables,
// the auto styles' ranges and the bottom sheet's snapping (spec 07 H.6, H.12).
import { test } from "node:test";
import assert from "node:assert/strict";
import { autoStyle, styledRange, STYLED_PARAMS } from "../src/autostyle.js";
import { colourAt, hex, parseHex, seedStops, stopsTable, type Stop } from "../src/palette.js";
import { snapAfterDrag } from "../src/sheet.js";

const RED: Stop = { t: 0, rgb: [255, 0, 0] };
const BLUE: Stop = { t: 1, rgb: [0, 0, 255] };

test("custom palette: interpolated between stops, flat beyond the ends, in position order", () => {
  assert.deepEqual(colourAt([BLUE, RED], 0.5), [128, 0, 128]);
  assert.deepEqual(colourAt([{ t: 0.25, rgb: [10, 20, 30] }, BLUE], 0), [10, 20, 30]);
  const t = stopsTable([BLUE, RED], false);
  assert.deepEqual([...t.subarray(0, 3)], [255, 0, 0]);
  assert.deepEqual([...t.subarray(765, 768)], [0, 0, 255]);
  assert.deepEqual([...t.subarray(3 * 51, 3 * 52)], [0, 1, 2].map((c) => Math.round(RED.rgb[c]! + (BLUE.rgb[c]! - RED.rgb[c]!) * (51 / 255))));
});

test("custom palette in contour mode: one equal run of entries per stop, in its colour", () => {
  const stops: Stop[] = [RED, { t: 0.3, rgb: [0, 255, 0] }, BLUE];
  const t = stopsTable(stops, true);
  const runs: string[] = [];
  for (let i = 0; i < 256; i++) {
    const c = hex([t[3 * i]!, t[3 * i + 1]!, t[3 * i + 2]!]);
    if (runs.at(-1) !== c) runs.push(c);
  }
  assert.deepEqual(runs, ["#ff0000", "#00ff00", "#0000ff"]);
  // The colour scale's band k of 3 lands in run k (colour.ts: index round((k + 0.5) / n * 255)).
  for (let k = 0; k < 3; k++) {
    const i = Math.round(((k + 0.5) / 3) * 255);
    assert.equal(hex([t[3 * i]!, t[3 * i + 1]!, t[3 * i + 2]!]), runs[k]);
  }
});

test("custom palette: seeded with five evenly spaced colours of a table", () => {
  const table = stopsTable([RED, BLUE], false);
  const s = seedStops(table);
  assert.deepEqual(s.map((x) => x.t), [0, 0.25, 0.5, 0.75, 1]);
  assert.deepEqual(s[0]!.rgb, [255, 0, 0]);
  assert.deepEqual(s[4]!.rgb, [0, 0, 255]);
  assert.deepEqual(s[2]!.rgb, [...table.subarray(3 * 128, 3 * 129)]);
  assert.equal(hex([1, 171, 255]), "#01abff");
  assert.deepEqual(parseHex("#01ABff"), [1, 171, 255]);
  assert.equal(parseHex("red"), undefined);
});

test("auto styles: a fixed range in the param's units, else the data's", () => {
  const t2 = autoStyle("2t");
  assert.ok(t2 !== undefined && t2.units === "K" && t2.display === "°C");
  const data = { min: 250, max: 300 };
  assert.deepEqual(styledRange(t2, "K", data), { min: 233.15, max: 313.15 });
  assert.deepEqual(styledRange(t2, undefined, data), { min: 233.15, max: 313.15 });
  // Another unit, or values that never meet the range (a 2t in °C labelled K): the data's range.
  assert.deepEqual(styledRange(t2, "degC", data), data);
  assert.deepEqual(styledRange(t2, "K", { min: -30, max: 35 }), { min: -30, max: 35 });
  // Geopotential has no fixed range; an unknown param has no style.
  assert.deepEqual(styledRange(autoStyle("z"), "m**2 s**-2", data), data);
  assert.equal(autoStyle("toString"), undefined);
  assert.equal(autoStyle("xyz"), undefined);
  for (const p of ["2t", "t2m", "mn2t", "mx2t", "sst", "2d", "msl", "sp", "10si", "ws", "cape", "cin", "tp", "cp", "sf", "tcc", "lcc", "mcc", "hcc", "lsm", "z", "ci", "siconc"]) {
    assert.ok(STYLED_PARAMS.includes(p), p);
  }
});

test("bottom sheet: < 60 px keeps the height, 60…120 px moves one level, more skips one", () => {
  assert.equal(snapAfterDrag("half", 59), "half");
  assert.equal(snapAfterDrag("half", -59), "half");
  assert.equal(snapAfterDrag("half", 60), "full");
  assert.equal(snapAfterDrag("half", -100), "collapsed");
  assert.equal(snapAfterDrag("collapsed", 121), "full");
  assert.equal(snapAfterDrag("collapsed", 100), "half");
  assert.equal(snapAfterDrag("full", -121), "collapsed");
  assert.equal(snapAfterDrag("full", 500), "full");
  assert.equal(snapAfterDrag("collapsed", -500), "collapsed");
});
